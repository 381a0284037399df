import { Editor } from '@tiptap/core';
import { type GuardEvent, type LockedLink, lockedLinkOf, ProtectedLinkGuard, protectedLinksIn, replaceContentMeta } from './protected-link.js';
import { articleExtensions } from './schema.js';

/**
 * The rich-text view of the article editor. The form's HTML textarea stays the field that is
 * submitted (the server sanitises and guards it as it does an API write); this view writes into it
 * only once it has been edited, so a save without changes keeps the stored body exactly. The HTML
 * view (the textarea, with editor.js's live protected-link check) is one click away.
 */

const textarea = document.getElementById('body');
if (textarea instanceof HTMLTextAreaElement && !textarea.matches(':disabled')) mount(textarea);

function element<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Record<string, string>, text = ''): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.textContent = text;
  return node;
}

const linkList = (links: readonly LockedLink[]): string => links.map((link) => `“${link.text}” → ${link.href}`).join('; ');

/** What the editor says when it refuses a change, or while a cut protected link waits to be pasted. */
function messageOf(event: GuardEvent): string | undefined {
  if (event.kind === 'allowed') {
    return event.missing.length === 0
      ? undefined
      : `Paste the protected link you cut back into the article (Ctrl+V or ⌘V) before saving: ${linkList(event.missing)}.`;
  }
  switch (event.reason) {
    case 'delete':
      return `Protected links cannot be deleted: ${linkList(event.links)}. Anchorage inserted them for your backlink network. You may move one: drag it, or cut it and paste it elsewhere.`;
    case 'add':
      return `Protected links cannot be copied or added: ${linkList(event.links)}. Only Anchorage inserts them; each one stays in the article once.`;
    case 'edit':
      return `Protected links cannot be edited or unlinked: ${linkList(event.links)}. Their address, text and attributes stay exactly as Anchorage inserted them. You may move one: drag it, or cut it and paste it elsewhere.`;
  }
}

function mount(body: HTMLTextAreaElement): void {
  const stylesheet = element('link', { rel: 'stylesheet', href: '/assets/rich-editor.css' });
  document.head.append(stylesheet);

  const shell = element('div', { class: 'rich-editor', 'data-view': 'rich' });
  const bar = element('div', { class: 'rich-toolbar', role: 'toolbar', 'aria-label': 'Formatting', 'aria-controls': 'rich-body' });
  const views = element('div', { class: 'rich-views', role: 'group', 'aria-label': 'View' });
  const richButton = element('button', { type: 'button', 'aria-pressed': 'true' }, 'Rich text');
  const htmlButton = element('button', { type: 'button', 'aria-pressed': 'false' }, 'HTML');
  views.append(richButton, htmlButton);
  const message = element('p', { class: 'rich-message', id: 'rich-message', role: 'alert' });
  message.hidden = true;
  const surface = element('div', { class: 'rich-surface' });
  shell.append(views, bar, message, surface);
  body.before(shell);
  body.hidden = true;

  const label = document.querySelector<HTMLLabelElement>('label[for="body"]');
  if (label) {
    label.id ||= 'body-label';
    label.textContent = 'Body';
  }

  const say = (text: string | undefined) => {
    message.hidden = text === undefined;
    message.textContent = text ?? '';
  };

  let original = new Map<string, string[]>();
  // Whether the rich view was edited: until then the textarea keeps the stored body exactly.
  let edited = false;
  let syncTimer: ReturnType<typeof setTimeout> | undefined;
  /** The textarea takes the rich view's HTML; editor.js checks the protected links again on input. */
  const syncToHtml = () => {
    clearTimeout(syncTimer);
    if (!edited) return;
    body.value = editor.getHTML();
    body.dispatchEvent(new Event('input'));
  };
  const editor = new Editor({
    element: surface,
    extensions: [
      ...articleExtensions,
      ProtectedLinkGuard.configure({ original: () => original, onEvent: (event) => say(messageOf(event)) }),
    ],
    content: body.value,
    // The CSP allows our own stylesheets only: rich-editor.css carries what Tiptap would inject.
    injectCSS: false,
    editorProps: {
      attributes: {
        id: 'rich-body',
        class: 'rich-content',
        role: 'textbox',
        'aria-multiline': 'true',
        'aria-labelledby': label?.id ?? '',
        'aria-describedby': 'body-hint rich-message',
      },
    },
    onUpdate: () => {
      edited = true;
      clearTimeout(syncTimer);
      syncTimer = setTimeout(syncToHtml, 300);
    },
  });
  original = protectedLinksIn(editor.state.doc);

  const toHtmlView = () => {
    syncToHtml();
    show('html');
  };
  const toRichView = () => {
    // The HTML view may hold any markup: the rich view takes it as it is and the guard goes on
    // from there; the server still checks the save against the stored body.
    editor.chain().command(({ tr }) => {
      tr.setMeta(replaceContentMeta, true);
      return true;
    }).setContent(body.value, { emitUpdate: false }).run();
    // The textarea holds this content exactly: it is what a save sends until the next edit.
    edited = false;
    say(undefined);
    show('rich');
  };
  const show = (view: 'rich' | 'html') => {
    shell.dataset.view = view;
    richButton.setAttribute('aria-pressed', String(view === 'rich'));
    htmlButton.setAttribute('aria-pressed', String(view === 'html'));
    bar.hidden = view === 'html';
    surface.hidden = view === 'html';
    body.hidden = view === 'rich';
    if (view === 'html') body.focus();
    else editor.commands.focus();
  };
  richButton.addEventListener('click', () => {
    if (shell.dataset.view !== 'rich') toRichView();
  });
  htmlButton.addEventListener('click', () => {
    if (shell.dataset.view !== 'html') toHtmlView();
  });
  body.form?.addEventListener('submit', () => {
    if (shell.dataset.view === 'rich') syncToHtml();
  });

  /** The protected links in the selection: a link or unlink there is refused, saying why. */
  const refusedOnLocked = (): boolean => {
    const { from, to } = editor.state.selection;
    const links: LockedLink[] = [];
    editor.state.doc.nodesBetween(from, to, (node) => {
      if (node.type.name === 'protectedLink') links.push(lockedLinkOf(String(node.attrs.html)));
      return true;
    });
    if (links.length > 0) say(messageOf({ kind: 'refused', reason: 'edit', links }));
    return links.length > 0;
  };
  const link = () => {
    if (refusedOnLocked()) return;
    const current: unknown = editor.getAttributes('link').href;
    const href = window.prompt('Link address (https://…)', typeof current === 'string' ? current : 'https://')?.trim();
    if (href === undefined) return;
    const chain = editor.chain().focus().extendMarkRange('link');
    const done = href === ''
      ? chain.unsetLink().run()
      : editor.state.selection.empty && !editor.isActive('link')
        ? chain.insertContent({ type: 'text', text: href, marks: [{ type: 'link', attrs: { href } }] }).run()
        : chain.setLink({ href }).run();
    if (!done) say('Links need a web address (https://…), an e-mail address (mailto:…) or a path on your website (/…).');
  };
  const unlink = () => {
    if (!refusedOnLocked()) editor.chain().focus().extendMarkRange('link').unsetLink().run();
  };

  const tools: { label: string; title: string; run: () => void; active?: () => boolean }[] = [
    { label: 'P', title: 'Paragraph', run: () => editor.chain().focus().setParagraph().run(), active: () => editor.isActive('paragraph') },
    ...([2, 3, 4] as const).map((level) => ({
      label: `H${level}`,
      title: `Heading ${level}`,
      run: () => editor.chain().focus().toggleHeading({ level }).run(),
      active: () => editor.isActive('heading', { level }),
    })),
    { label: 'B', title: 'Bold', run: () => editor.chain().focus().toggleBold().run(), active: () => editor.isActive('bold') },
    { label: 'I', title: 'Italic', run: () => editor.chain().focus().toggleItalic().run(), active: () => editor.isActive('italic') },
    { label: '• List', title: 'Bulleted list', run: () => editor.chain().focus().toggleBulletList().run(), active: () => editor.isActive('bulletList') },
    { label: '1. List', title: 'Numbered list', run: () => editor.chain().focus().toggleOrderedList().run(), active: () => editor.isActive('orderedList') },
    { label: '❝', title: 'Quote', run: () => editor.chain().focus().toggleBlockquote().run(), active: () => editor.isActive('blockquote') },
    { label: '</>', title: 'Code block', run: () => editor.chain().focus().toggleCodeBlock().run(), active: () => editor.isActive('codeBlock') },
    { label: 'Link', title: 'Link', run: () => link(), active: () => editor.isActive('link') },
    { label: 'Unlink', title: 'Remove link', run: () => unlink() },
    { label: 'Table', title: 'Insert a table', run: () => editor.chain().focus().insertTable({ rows: 3, cols: 3, withHeaderRow: true }).run() },
    { label: '―', title: 'Horizontal rule', run: () => editor.chain().focus().setHorizontalRule().run() },
    { label: '↶', title: 'Undo', run: () => editor.chain().focus().undo().run() },
    { label: '↷', title: 'Redo', run: () => editor.chain().focus().redo().run() },
  ];
  const buttons = tools.map((tool) => {
    const button = element('button', { type: 'button', title: tool.title, 'aria-label': tool.title }, tool.label);
    button.addEventListener('mousedown', (event) => event.preventDefault());
    button.addEventListener('click', tool.run);
    bar.append(button);
    return { button, tool };
  });
  const refresh = () => {
    for (const { button, tool } of buttons) if (tool.active) button.setAttribute('aria-pressed', String(tool.active()));
  };
  editor.on('selectionUpdate', refresh);
  editor.on('transaction', refresh);
  refresh();
}
