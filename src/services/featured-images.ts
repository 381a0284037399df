import { validationFailed } from '../core/errors.js';
import type { Actor } from './actor.js';
import type { WriteOptions, WriteResult } from './article-states.js';
import type { ArticleWritesService } from './article-writes.js';
import { sha256 } from '../core/secrets.js';
import { checkImage, mediaNameOf, type MediaStore } from './media.js';

export interface FeaturedImageInput {
  /** An absolute http(s) URL, stored and never fetched. */
  url?: string;
  /** Uploaded image bytes, stored by the media store. */
  image?: Buffer;
  reason?: string;
}

const absoluteHttpUrl = (value: string): boolean => {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
};

/** Featured images: exactly one of an uploaded image or a URL per request. */
export class FeaturedImagesService {
  constructor(
    private readonly writes: ArticleWritesService,
    private readonly media: MediaStore,
    private readonly publicUrl: string,
    private readonly maxImageBytes: number,
  ) {}

  async replace(actor: Actor, articleId: number, input: FeaturedImageInput, options: WriteOptions = {}): Promise<WriteResult> {
    if ((input.image === undefined) === (input.url === undefined)) {
      throw validationFailed({ image: ['Send exactly one of image or url.'], url: ['Send exactly one of image or url.'] });
    }
    let url: string;
    let fingerprint: string;
    let storeMedia: WriteOptions['storeMedia'];
    let undo: (() => Promise<void>) | undefined;
    if (input.image !== undefined) {
      const image = await checkImage(input.image, this.maxImageBytes);
      url = `${this.publicUrl}/media/${mediaNameOf(image)}`;
      fingerprint = sha256(input.image);
      // Stored only once access, If-Match, the guard, the edit allowance and the idempotency key
      // have all passed: a refused upload leaves nothing under /media/.
      storeMedia = async (trx) => {
        ({ undo } = await this.media.put(image, trx));
      };
    } else {
      if (!absoluteHttpUrl(input.url!)) throw validationFailed({ url: ['Must be an absolute http or https URL.'] });
      url = input.url!;
      fingerprint = url;
    }
    try {
      return await this.writes.replaceFeaturedImage(
        actor,
        articleId,
        { url, reason: input.reason, fingerprint: `${fingerprint}|${input.reason ?? ''}` },
        { ...options, storeMedia },
      );
    } catch (error) {
      // The transaction failed after the file was written (a commit error): take a new file back.
      await undo?.();
      throw error;
    }
  }
}

