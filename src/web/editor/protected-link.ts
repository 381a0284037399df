import { Extension, Node } from '@tiptap/core';
import type { Node as ProseMirrorNode } from '@tiptap/pm/model';
import { NodeSelection, Plugin, PluginKey, type Transaction } from '@tiptap/pm/state';

/**
 * Protected links (`<a … data-service-protected="backlink|internal">`) as locked inline atoms:
 * the node keeps the anchor's exact HTML and renders it back unchanged, so the server's guard
 * finds every protected link as it was. A guard refuses any change that deletes one (a cut may
 * take it away until it is pasted back: a move) or adds one that the article did not hold.
 */

/** ProseMirror marks the first element it puts on the clipboard; the anchor must not keep it. */
const CLIPBOARD_MARK = 'data-pm-slice';

/** The anchor's HTML without the clipboard's mark. */
function anchorHtml(element: HTMLElement): string {
  const copy = element.cloneNode(true) as HTMLElement;
  copy.removeAttribute(CLIPBOARD_MARK);
  return copy.outerHTML;
}

/** The anchor element of a node's HTML (parsed in an inert template: nothing loads or runs). */
function anchorOf(html: string): HTMLAnchorElement {
  const template = document.createElement('template');
  template.innerHTML = html;
  const anchor = template.content.firstElementChild;
  if (!(anchor instanceof HTMLAnchorElement)) throw new Error('a protected link node without its anchor');
  return anchor;
}

/**
 * The comparison key of an anchor, as the server's guard compares them: attributes sorted by
 * name with their values, and the inner markup.
 */
// The guard looks at every protected link on every change: each anchor is parsed once.
const anchorKeys = new Map<string, string>();

export function anchorKey(html: string): string {
  let key = anchorKeys.get(html);
  if (key === undefined) {
    const anchor = anchorOf(html);
    const attributes = [...anchor.attributes].map(({ name, value }) => `${name}=${JSON.stringify(value)}`).sort();
    key = `${attributes.join(' ')}>${anchor.innerHTML}`;
    anchorKeys.set(html, key);
  }
  return key;
}

/** What a person sees of a protected link, for messages. */
export interface LockedLink {
  type: string;
  href: string;
  text: string;
}

export function lockedLinkOf(html: string): LockedLink {
  const anchor = anchorOf(html);
  return {
    type: anchor.getAttribute('data-service-protected') ?? '',
    href: anchor.getAttribute('href') ?? '',
    text: (anchor.textContent ?? '').replace(/\s+/g, ' ').trim(),
  };
}

export const ProtectedLink = Node.create({
  name: 'protectedLink',
  group: 'inline',
  inline: true,
  atom: true,
  selectable: true,
  draggable: true,
  // No bold, link or other mark may wrap or change it.
  marks: '',

  addAttributes() {
    return {
      html: { default: '', rendered: false, parseHTML: (element) => anchorHtml(element) },
    };
  },

  parseHTML() {
    // Before the link mark's `a[href]` rule: a protected anchor never becomes an ordinary link.
    return ['backlink', 'internal'].map((type) => ({ tag: `a[data-service-protected="${type}"]`, priority: 1000 }));
  },

  renderHTML({ node }) {
    return anchorOf(String(node.attrs.html));
  },

  addNodeView() {
    return ({ node }) => {
      const link = lockedLinkOf(String(node.attrs.html));
      const dom = document.createElement('span');
      dom.className = 'protected-link';
      dom.contentEditable = 'false';
      dom.setAttribute('data-type', link.type);
      dom.title = `Protected ${link.type} link to ${link.href}: you may move it, but not change or delete it.`;
      // The anchor's content without the anchor itself: a click in the editor never follows it.
      dom.append(...[...anchorOf(String(node.attrs.html)).childNodes]);
      return { dom, ignoreMutation: () => true };
    };
  },
});

/** Why the guard refused a change, or that a cut link waits to be pasted back. */
export type GuardEvent =
  | { kind: 'refused'; reason: 'delete' | 'add' | 'edit'; links: LockedLink[] }
  | { kind: 'allowed'; missing: LockedLink[] };

/** Tells the guard the content came from the HTML view: take it as it is. */
export const replaceContentMeta = 'anchorage:replaceContent';

const guardKey = new PluginKey('protectedLinkGuard');

export function protectedLinksIn(doc: ProseMirrorNode): Map<string, string[]> {
  const found = new Map<string, string[]>();
  doc.descendants((node) => {
    if (node.type.name !== 'protectedLink') return true;
    const html = String(node.attrs.html);
    const key = anchorKey(html);
    found.set(key, [...(found.get(key) ?? []), html]);
    return false;
  });
  return found;
}

const copiesOf = (links: Map<string, string[]>, key: string): string[] => links.get(key) ?? [];

export interface GuardOptions {
  /** The protected links the article holds (the stored body's): never fewer, never more. */
  original: () => Map<string, string[]>;
  onEvent: (event: GuardEvent) => void;
}

export const ProtectedLinkGuard = Extension.create<GuardOptions>({
  name: 'protectedLinkGuard',

  addOptions() {
    return { original: () => new Map(), onEvent: () => undefined };
  },

  addProseMirrorPlugins() {
    const { original, onEvent } = this.options;
    const verdict = (tr: Transaction, before: Map<string, string[]>): GuardEvent => {
      const after = protectedLinksIn(tr.doc);
      const allowed = original();
      const added: LockedLink[] = [];
      const lost: LockedLink[] = [];
      const missing: LockedLink[] = [];
      for (const key of new Set([...before.keys(), ...after.keys(), ...allowed.keys()])) {
        const [was, is, held] = [copiesOf(before, key), copiesOf(after, key), copiesOf(allowed, key)];
        // More than the article holds: a copy, or a forged protected link.
        added.push(...is.slice(Math.max(held.length, was.length)).map(lockedLinkOf));
        // Fewer than before, and fewer than the article holds: a link of the article taken away.
        lost.push(...was.slice(is.length, held.length).map(lockedLinkOf));
        missing.push(...held.slice(is.length).map(lockedLinkOf));
      }
      if (added.length > 0) return { kind: 'refused', reason: 'add', links: added };
      // A cut is the first half of a move: the link waits on the clipboard to be pasted back.
      if (lost.length > 0 && tr.getMeta('uiEvent') !== 'cut') return { kind: 'refused', reason: 'delete', links: lost };
      return { kind: 'allowed', missing };
    };
    return [
      new Plugin({
        key: guardKey,
        filterTransaction: (tr, state) => {
          if (!tr.docChanged || tr.getMeta(replaceContentMeta) === true) return true;
          const event = verdict(tr, protectedLinksIn(state.doc));
          onEvent(event);
          return event.kind === 'allowed';
        },
        props: {
          handleDoubleClickOn: (view, _pos, node, nodePos) => {
            if (node.type.name !== 'protectedLink') return false;
            // ProseMirror selects a double click's word as the button goes down, before this runs:
            // beside an atom that is the text next to it, which typing would then replace. The
            // link is selected instead, as by a single click, so the next key is refused as well.
            view.dispatch(view.state.tr.setSelection(NodeSelection.create(view.state.doc, nodePos)));
            onEvent({ kind: 'refused', reason: 'edit', links: [lockedLinkOf(String(node.attrs.html))] });
            return true;
          },
        },
      }),
    ];
  },
});
