import escapeHtml from 'escape-html';
import { html, raw, type SafeHtml } from './html.js';

/**
 * An image address as the UI uses it: the service's own media (stored as `PUBLIC_URL/media/…`)
 * as a path, so a page opened at any of the service's addresses (localhost, 127.0.0.1, a proxy's
 * name) loads it from where it was opened; any other address as it is.
 */
export function uiImageSource(url: string, publicUrl: string): string {
  const own = `${publicUrl}/media/`;
  return url.startsWith(own) ? `/media/${url.slice(own.length)}` : url;
}

/** An article body for the preview, its own media as paths (see uiImageSource). */
export function previewBody(body: string, publicUrl: string): SafeHtml {
  return raw(body.split(`src="${escapeHtml(publicUrl)}/media/`).join('src="/media/'));
}

/**
 * A featured image, or a placeholder saying why it is not shown: the pages load images from the
 * service and over https only (their Content-Security-Policy), so an `http://` address is shown
 * as a link. An image that fails to load is replaced by the same placeholder (/assets/images.js).
 */
export function featuredImage(url: string, publicUrl: string, alt: string): SafeHtml {
  const src = uiImageSource(url, publicUrl);
  if (src.startsWith('/media/') || /^https:\/\//i.test(src)) {
    return html`<img class="featured" src="${src}" alt="${alt}" data-placeholder="The image at this address could not be loaded.">`;
  }
  return html`<p class="image-placeholder" role="img" aria-label="${alt}: not shown">
  <strong>Image not shown.</strong> Pages of Anchorage load images over https only, and this one is at an insecure (http) address:
  <a href="${url}" rel="noopener noreferrer nofollow" target="_blank" class="image-address">${url}</a>
</p>`;
}
