import { type Extensions, Node } from '@tiptap/core';
import Image from '@tiptap/extension-image';
import Subscript from '@tiptap/extension-subscript';
import Superscript from '@tiptap/extension-superscript';
import { Table, TableCell, TableHeader, TableRow } from '@tiptap/extension-table';
import StarterKit from '@tiptap/starter-kit';
import { ProtectedLink } from './protected-link.js';

/**
 * The editor's schema: the sanitiser's allowlist (src/core/html.ts) and nothing more, so that
 * what the editor writes is what the server keeps. Each element renders without classes or
 * styles (the server would remove them and say so).
 */

/** A paragraph holding only an image, as bodies often wrap one: read as the image alone. */
function soleImageOf(paragraph: HTMLElement): Record<string, string> | false {
  const image = paragraph.firstElementChild;
  if (paragraph.childElementCount !== 1 || !(image instanceof HTMLImageElement) || (paragraph.textContent ?? '').trim() !== '') return false;
  return Object.fromEntries([...image.attributes].map(({ name, value }) => [name, value]));
}

/**
 * `<img>` with the attributes the sanitiser keeps (`loading` besides the usual ones), a block of
 * its own (a figure holds one); `<p><img></p>` is read as the image, not split around it.
 */
const ArticleImage = Image.extend({
  addAttributes() {
    return { ...this.parent?.(), loading: { default: null } };
  },
  parseHTML() {
    return [...(this.parent?.() ?? []), { tag: 'p', priority: 60, getAttrs: soleImageOf }];
  },
});

/** A plain `<table><tbody>`: no column group or width styles, which the sanitiser removes. */
const ArticleTable = Table.extend({
  renderHTML() {
    return ['table', ['tbody', 0]];
  },
});

/** `<figure>` holding an image and its `<figcaption>`. */
const Figure = Node.create({
  name: 'figure',
  group: 'block',
  content: 'image figcaption?',
  parseHTML: () => [{ tag: 'figure' }],
  renderHTML: () => ['figure', 0],
});

const Figcaption = Node.create({
  name: 'figcaption',
  content: 'inline*',
  parseHTML: () => [{ tag: 'figcaption' }],
  renderHTML: () => ['figcaption', 0],
});

export const articleExtensions: Extensions = [
  StarterKit.configure({
    heading: { levels: [2, 3, 4, 5, 6] },
    // No empty paragraph appended after a closing list or table: the body stays as written.
    trailingNode: false,
    link: {
      openOnClick: false,
      autolink: false,
      protocols: [],
      HTMLAttributes: { target: null, rel: null, class: null },
    },
  }),
  ArticleImage.configure({ inline: false }),
  Figure,
  Figcaption,
  Subscript,
  Superscript,
  ArticleTable.configure({ resizable: false }),
  TableRow,
  TableHeader,
  TableCell,
  ProtectedLink,
];
