import { createHash } from 'node:crypto';
import { access, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Kysely, Transaction } from 'kysely';
import { AppError } from '../core/errors.js';
import type { Clock } from '../core/time.js';
import { toTimestamp } from '../core/time.js';
import type { Database } from '../db/schema.js';

export const maxImagePixels = 40_000_000;

const formats: Record<string, { contentType: string; extension: string }> = {
  jpeg: { contentType: 'image/jpeg', extension: 'jpg' },
  png: { contentType: 'image/png', extension: 'png' },
  webp: { contentType: 'image/webp', extension: 'webp' },
  gif: { contentType: 'image/gif', extension: 'gif' },
  avif: { contentType: 'image/avif', extension: 'avif' },
};

export interface CheckedImage {
  bytes: Buffer;
  contentType: string;
  extension: string;
}

/** Recognises an image by its content (never its name) and enforces the size and pixel limits. */
export async function checkImage(bytes: Buffer, maxBytes: number): Promise<CheckedImage> {
  if (bytes.length > maxBytes) {
    throw new AppError('image_too_large', `The image is larger than ${maxBytes} bytes.`, { limit: maxBytes });
  }
  let format: string | undefined;
  let pixels = 0;
  try {
    // Loaded on the first upload, not at start: libvips takes memory a node without uploads never needs.
    const { default: sharp } = await import('sharp');
    const meta = await sharp(bytes, { limitInputPixels: false }).metadata();
    // sharp reports AVIF as the HEIF container with AV1 compression.
    format = meta.format === 'heif' ? (meta.compression === 'av1' ? 'avif' : undefined) : meta.format;
    pixels = (meta.width ?? 0) * (meta.height ?? 0) * Math.max(1, meta.pages ?? 1);
  } catch {
    format = undefined;
  }
  const known = format ? formats[format] : undefined;
  if (!known) throw new AppError('unsupported_image', 'The file is not a JPEG, PNG, WebP, GIF or AVIF image.');
  if (pixels > maxImagePixels) {
    // `limit` is in the unit the message names: pixels here, bytes for the file size.
    throw new AppError('image_too_large', `The image has more than ${maxImagePixels} pixels (limit in pixels).`, { limit: maxImagePixels });
  }
  return { bytes, ...known };
}

/** Where uploaded images live: content-addressed names, served under the service's own URL. */
export interface MediaStore {
  /**
   * Stores the image under `mediaNameOf(image)` as part of a write's transaction `trx` (the
   * database store writes through it). Returns how to take a newly created file back if that
   * transaction fails after all.
   */
  put(image: CheckedImage, trx?: Transaction<Database>): Promise<{ undo: () => Promise<void> }>;
  get(name: string): Promise<{ bytes: Buffer; contentType: string } | undefined>;
  /**
   * Removes images by name as part of the transaction `trx` (account deletion): the database
   * store deletes them in it; the file store only once it committed, through `afterCommit`.
   */
  remove(names: readonly string[], trx: Transaction<Database>): Promise<{ afterCommit: () => Promise<void> }>;
}

/** Names per DELETE, well under either database's limit on bound parameters. */
const removeBatch = 500;

export const mediaNameOf = (image: CheckedImage) => `${createHash('sha256').update(image.bytes).digest('hex')}.${image.extension}`;
const namePattern = /^[0-9a-f]{64}\.(jpg|png|webp|gif|avif)$/;
const contentTypeOfName = (name: string) =>
  Object.values(formats).find((f) => name.endsWith(`.${f.extension}`))!.contentType;

/** Files under DATA_DIR/media (one disk, or a shared volume between nodes). */
export class FileMediaStore implements MediaStore {
  constructor(private readonly dir: string) {}

  async put(image: CheckedImage) {
    const name = mediaNameOf(image);
    const path = join(this.dir, name);
    const existed = await access(path).then(() => true, () => false);
    await mkdir(this.dir, { recursive: true });
    // Write then rename, so a reader never sees half a file.
    const temporary = join(this.dir, `.${name}.${process.pid}.tmp`);
    await writeFile(temporary, image.bytes);
    await rename(temporary, path);
    return { undo: async () => (existed ? undefined : rm(path, { force: true })) };
  }

  async get(name: string) {
    if (!namePattern.test(name)) return undefined;
    try {
      return { bytes: await readFile(join(this.dir, name)), contentType: contentTypeOfName(name) };
    } catch {
      return undefined;
    }
  }

  async remove(names: readonly string[]) {
    const files = names.filter((name) => namePattern.test(name));
    return { afterCommit: async () => void (await Promise.all(files.map((name) => rm(join(this.dir, name), { force: true })))) };
  }
}

/** Image bytes in the database, so nodes need no shared disk. */
export class DatabaseMediaStore implements MediaStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async put(image: CheckedImage, trx?: Transaction<Database>) {
    const name = mediaNameOf(image);
    await (trx ?? this.db)
      .insertInto('media')
      .values({ key: name, content_type: image.contentType, bytes: image.bytes, created_at: toTimestamp(this.clock.now()) })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    // Inside `trx`, a failed write rolls the row back itself.
    return { undo: async () => undefined };
  }

  async get(name: string) {
    if (!namePattern.test(name)) return undefined;
    const row = await this.db.selectFrom('media').select(['bytes', 'content_type']).where('key', '=', name).executeTakeFirst();
    return row ? { bytes: Buffer.from(row.bytes), contentType: row.content_type } : undefined;
  }

  async remove(names: readonly string[], trx: Transaction<Database>) {
    for (let i = 0; i < names.length; i += removeBatch) await trx.deleteFrom('media').where('key', 'in', names.slice(i, i + removeBatch)).execute();
    return { afterCommit: async () => undefined };
  }
}
