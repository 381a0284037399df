import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { applyReplacements } from '../../src/core/body-replacements.js';
import { MAX_NESTING_DEPTH } from '../../src/core/html-containers.js';
import { sanitizeBody, sanitizeTrusted } from '../../src/core/html.js';
import { protectedAnchorsOf, protectedLinksOf, violatedProtectedLinks, wordCount } from '../../src/core/protected-anchors.js';

const clientSanitize = (html: string) => sanitizeBody(html, { protectedBefore: [] });

const backlink = '<a href="https://partner.example/Path?a=1&amp;b=2" rel="nofollow" data-service-protected="backlink">best running shoes</a>';
const internal = '<a href="/guides/shoes" data-service-protected="internal">our shoe guide</a>';
const stored = sanitizeTrusted(`<h2>Shoes</h2><p>Read about the ${backlink} today.</p><p>See ${internal}.</p>`);

/** The write path: sanitise the submitted body against the stored one, then run the guard. */
function guard(before: string, submitted: string) {
  const { html } = sanitizeBody(submitted, { protectedBefore: protectedAnchorsOf(before) });
  return violatedProtectedLinks(before, html);
}

const backlinkLink = { type: 'backlink', href: 'https://partner.example/Path?a=1&b=2', text: 'best running shoes' };
const internalLink = { type: 'internal', href: '/guides/shoes', text: 'our shoe guide' };

describe('sanitizeBody', () => {
  it('keeps an allowlisted body byte for byte', () => {
    const body =
      '<h2>Title</h2><p>Some <strong>bold</strong>, <em>em</em>, <b>b</b>, <i>i</i>, <u>u</u>, <s>s</s>, x<sub>2</sub>, x<sup>2</sup>, <span>span</span>, <code>code</code>.</p>' +
      '<h3>a</h3><h4>b</h4><h5>c</h5><h6>d</h6><ul><li>one</li></ul><ol><li>two</li></ol><blockquote>quote</blockquote><pre>pre\n  text</pre><br /><hr />' +
      '<figure><img src="https://cdn.example/a.png" alt="" title="t" width="100" height="50" loading="lazy" /><figcaption>caption</figcaption></figure>' +
      '<table><thead><tr><th colspan="2">h</th></tr></thead><tbody><tr><td rowspan="2">c</td><td>d</td></tr></tbody></table>' +
      '<p><a href="https://example.com/" title="t" rel="nofollow" target="_blank">link</a> <a href="mailto:a@example.com">mail</a> <a href="/relative">rel</a> <a href="//cdn.example/x">proto</a> <a href="#top">frag</a></p>';
    expect(clientSanitize(body)).toEqual({ html: body, removed: [] });
  });

  it('removes what the allowlist does not allow and says what it removed', () => {
    const result = clientSanitize(
      '<div class="x" style="color:red"><p id="p1" onclick="go()">Hi<script>alert(1)</script></p>' +
        '<img src="data:image/png;base64,AAAA" onerror="x()"><a href="javascript:alert(1)" onclick="y()">a</a>' +
        '<a href="tel:123">t</a><a href="ftp://x.example/">f</a><iframe src="https://x.example"><p>inside</p></iframe>' +
        '<span data-service-protected="backlink">s</span><a href="">empty</a><!-- note --></div>',
    );
    expect(result.html).toBe('<p>Hi</p><img /><a>a</a><a>t</a><a>f</a><span>s</span><a>empty</a>');
    expect(result.removed).toEqual([
      '<div> element',
      'id attribute on <p>',
      'onclick attribute on <p>',
      '<script> element',
      'data: URL in img[src]',
      'onerror attribute on <img>',
      'javascript: URL in a[href]',
      'onclick attribute on <a>',
      'tel: URL in a[href]',
      'ftp: URL in a[href]',
      '<iframe> element',
      'data-service-protected attribute on <span>',
      'empty href attribute on <a>',
      'removed 8 characters of text inside <script>',
      'removed 6 characters of text inside <iframe>',
      'HTML comment',
    ]);
  });

  it('names the scheme of a rejected URL however it is disguised', () => {
    for (const href of ['java&#09;script:alert(1)', '  JAVASCRIPT:alert(1)', 'jav<!-- -->ascript:alert(1)', '&#x6A;avascript:alert(1)', 'javascript&colon;alert(1)']) {
      expect(clientSanitize(`<a href="${href}">x</a>`)).toEqual({ html: '<a>x</a>', removed: ['javascript: URL in a[href]'] });
    }
    expect(clientSanitize('<a href="VBScript:x">x</a>').removed).toEqual(['vbscript: URL in a[href]']);
    expect(clientSanitize('<img src=" data:image/png;base64,AAAA">').removed).toEqual(['data: URL in img[src]']);
  });

  it('lists each kind of removal once', () => {
    expect(clientSanitize('<p onclick="a">1</p><p onclick="b">2</p><script>x</script><script>y</script>').removed).toEqual([
      'onclick attribute on <p>',
      '<script> element',
      'removed 2 characters of text inside <script>',
    ]);
  });

  it('drops the content of script-like and foreign elements but keeps the text of others', () => {
    expect(clientSanitize('<style>p{}</style><script>x()</script><svg><text>svg</text></svg><noscript>ns</noscript><div>kept</div><font>kept too</font>').html).toBe(
      'keptkept too',
    );
  });

  it('keeps the innermost link whole when links are nested', () => {
    expect(clientSanitize('<a href="/a">x<a href="/b">y</a>z</a>')).toEqual({
      html: 'x<a href="/b">y</a>z',
      removed: ['<a> element around another link'],
    });
  });

  it('reaches a fixed point when dropping an element restructures its children', () => {
    const once = clientSanitize('<ul><li>a<div><li>b</li></div></li></ul>').html;
    expect(clientSanitize(once).html).toBe(once);
  });

  it('refuses bodies nested deeper than the limit with validation_failed', () => {
    const deep = '<span>'.repeat(MAX_NESTING_DEPTH + 1);
    expect(() => clientSanitize(deep)).toThrow(AppError);
    try {
      sanitizeTrusted(deep);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).toBody()).toMatchObject({ error: 'validation_failed', fields: { body: [expect.any(String)] } });
    }
    expect(clientSanitize('<span>'.repeat(MAX_NESTING_DEPTH)).html).toBe(`${'<span>'.repeat(MAX_NESTING_DEPTH)}${'</span>'.repeat(MAX_NESTING_DEPTH)}`);
  });

  describe('protected markers', () => {
    it('lets a client create no protected link', () => {
      const result = clientSanitize('<p><a href="https://me.example" data-service-protected="backlink">mine</a></p>');
      expect(result).toEqual({
        html: '<p><a href="https://me.example">mine</a></p>',
        removed: ['data-service-protected attribute on a new link'],
      });
    });

    it('keeps the marker on an anchor that was protected before, wherever it moved', () => {
      const moved = `<p>See ${internal}.</p><p>Moved: ${backlink}</p>`;
      expect(sanitizeBody(moved, { protectedBefore: protectedAnchorsOf(stored) })).toEqual({ html: moved, removed: [] });
    });

    it('keeps the marker however the same anchor is spelled', () => {
      const respelled =
        "<a DATA-SERVICE-PROTECTED=backlink rel='nofollow' href='https://partner.example/Path?a=1&#38;b=2'>best&#32;running shoes</a>";
      const { html, removed } = sanitizeBody(respelled, { protectedBefore: protectedAnchorsOf(stored) });
      expect(removed).toEqual([]);
      expect(protectedLinksOf(html)).toEqual([backlinkLink]);
    });

    it('drops the marker from a protected anchor that was changed', () => {
      const changed = backlink.replace('best running shoes', 'cheap shoes');
      expect(sanitizeBody(changed, { protectedBefore: protectedAnchorsOf(stored) })).toEqual({
        html: changed.replace(' data-service-protected="backlink"', ''),
        removed: ['data-service-protected attribute on a new link'],
      });
    });

    it('keeps the marker on as many copies as were protected before', () => {
      const { html } = sanitizeBody(`${backlink}${backlink}`, { protectedBefore: protectedAnchorsOf(stored) });
      expect(html).toBe(`${backlink}${backlink.replace(' data-service-protected="backlink"', '')}`);
    });

    it('drops marker values other than backlink and internal', () => {
      for (const value of ['', 'BACKLINK', 'other', 'backlink ']) {
        expect(clientSanitize(`<a href="/x" data-service-protected="${value}">x</a>`)).toEqual({
          html: '<a href="/x">x</a>',
          removed: ['invalid data-service-protected value on <a>'],
        });
      }
    });

    it('sanitizeTrusted keeps valid markers and what it keeps passes sanitizeBody unchanged', () => {
      const imported = sanitizeTrusted(
        `<p onclick="x">Intro ${backlink} <a href="/y" data-service-protected="bogus">y</a> ${internal}</p>`,
      );
      expect(imported).toBe(`<p>Intro ${backlink} <a href="/y">y</a> ${internal}</p>`);
      expect(sanitizeTrusted(imported)).toBe(imported);
      expect(sanitizeBody(imported, { protectedBefore: protectedAnchorsOf(imported) })).toEqual({ html: imported, removed: [] });
    });
  });
});

describe('protectedLinksOf and protectedAnchorsOf', () => {
  it('lists protected links in document order with decoded href and text', () => {
    expect(protectedLinksOf(stored)).toEqual([backlinkLink, internalLink]);
    expect(protectedLinksOf('<p><a href="/a?x=&lt;1&gt;" data-service-protected="internal">A &amp; <b>B</b>&nbsp;C</a></p>')).toEqual([
      { type: 'internal', href: '/a?x=<1>', text: 'A & B\u00a0C' },
    ]);
  });

  it('ignores plain links, unknown marker values and markers on other elements', () => {
    expect(
      protectedLinksOf('<a href="/a">a</a><a href="/b" data-service-protected="x">b</a><span data-service-protected="backlink">c</span>'),
    ).toEqual([]);
    expect(protectedAnchorsOf('<p>no links</p>')).toEqual([]);
  });

  it('gives one canonical string per anchor: sorted attributes, decoded values, exact inner markup', () => {
    expect(protectedAnchorsOf(stored)).toEqual([
      '<a data-service-protected="backlink" href="https://partner.example/Path?a=1&amp;b=2" rel="nofollow">best running shoes</a>',
      '<a data-service-protected="internal" href="/guides/shoes">our shoe guide</a>',
    ]);
    expect(protectedAnchorsOf("<A Href='/x' DATA-SERVICE-PROTECTED=internal>a&#x20;<B>b</B></A>")).toEqual(
      protectedAnchorsOf('<a data-service-protected="internal" href="/x">a <b>b</b></a>'),
    );
  });
});

describe('violatedProtectedLinks', () => {
  const unchanged: [string, string][] = [
    ['the same body', stored],
    ['the anchors moved', `<p>${internal}</p><p>New text.</p><blockquote>${backlink}</blockquote>`],
    ['an anchor wrapped in other markup', `<p><strong>${backlink}</strong> ${internal}</p>`],
    ['an extra copy of an anchor', `${stored}<p>${backlink}</p>`],
    ['a respelled but equal href', stored.replace('?a=1&amp;b=2', '?a=1&#38;b=2').replace('/guides/shoes', '&#x2F;guides&#47;shoes')],
    ['a respelled but equal text', stored.replace('best running shoes', 'best&#32;running&#x20;shoes')],
    ['attributes reordered and requoted', stored.replace(backlink, `<a data-service-protected=backlink rel='nofollow' href="https://partner.example/Path?a=1&amp;b=2">best running shoes</a>`)],
    ['the anchor wrapped in another link, which is dropped', stored.replace(backlink, `<a href="https://evil.example">${backlink}</a>`)],
    ['an exact copy elsewhere and the original removed', `<p>First ${backlink}</p>${stored.replace(backlink, '')}`],
  ];
  it.each(unchanged)('accepts %s', (_, after) => {
    expect(guard(stored, after)).toEqual([]);
  });

  const broken: [string, string][] = [
    ['the anchor removed', stored.replace(backlink, 'best running shoes')],
    ['the href path case changed', stored.replace('/Path?', '/path?')],
    ['the href host case changed', stored.replace('https://partner.example', 'https://PARTNER.example')],
    ['a trailing slash added', stored.replace('/Path?a=1&amp;b=2', '/Path/?a=1&amp;b=2')],
    ['a query parameter changed', stored.replace('b=2', 'b=3')],
    ['the text changed', stored.replace('best running shoes', 'best running shoe')],
    ['white space in the text changed', stored.replace('best running shoes', 'best  running shoes')],
    ['markup added inside', stored.replace('best running shoes', 'best <b>running</b> shoes')],
    ['rel changed', stored.replace('rel="nofollow"', 'rel="sponsored"')],
    ['rel removed', stored.replace(' rel="nofollow"', '')],
    ['target added', stored.replace('rel="nofollow"', 'rel="nofollow" target="_blank"')],
    ['title added', stored.replace('rel="nofollow"', 'rel="nofollow" title="x"')],
    ['the marker removed', stored.replace(' data-service-protected="backlink"', '')],
    ['the type changed', stored.replace('data-service-protected="backlink"', 'data-service-protected="internal"')],
    ['the marker value upper-cased', stored.replace('"backlink"', '"BACKLINK"')],
    ['the anchor split by an end tag', stored.replace('best running shoes', 'best</a> running shoes')],
    ['another link inserted inside', stored.replace('running', '<a href="https://evil.example">running</a>')],
    ['the end tag removed', stored.replace('shoes</a>', 'shoes')],
    ['the opening tag broken', stored.replace('rel="nofollow" ', 'rel="nofollow ')],
    ['the opening tag unterminated', stored.replace('data-service-protected="backlink">', 'data-service-protected="backlink"')],
    ['the anchor hidden in a dropped element', stored.replace(backlink, `<template>${backlink}</template>`)],
    ['the anchor hidden in a comment', stored.replace(backlink, `<!-- ${backlink} -->`)],
    ['the anchor moved into a script', stored.replace(backlink, `<script>${backlink}</script>`)],
    ['a changed copy added and the original removed', `<p>${backlink.replace('shoes', 'boots')}</p>${stored.replace(backlink, '')}`],
  ];
  it.each(broken)('rejects %s', (_, after) => {
    expect(guard(stored, after)).toEqual([backlinkLink]);
  });

  it('counts copies: removing one of two equal anchors is a violation', () => {
    const twice = sanitizeTrusted(`<p>${backlink}</p><p>${backlink}</p>`);
    expect(guard(twice, `<p>${backlink}</p>`)).toEqual([backlinkLink]);
    expect(guard(twice, '')).toEqual([backlinkLink, backlinkLink]);
    expect(guard(twice, twice)).toEqual([]);
  });

  it('reports every missing link', () => {
    expect(guard(stored, '<p>nothing left</p>')).toEqual([backlinkLink, internalLink]);
  });

  it('accepts anything when nothing was protected', () => {
    expect(violatedProtectedLinks('<p>a</p>', '')).toEqual([]);
  });

  it('works on raw (unsanitised) bodies too', () => {
    expect(violatedProtectedLinks(stored, stored.replace('/Path', '/path'))).toEqual([backlinkLink]);
    expect(violatedProtectedLinks(stored, `<div class="x">${stored}</div>`)).toEqual([]);
  });
});

describe('applyReplacements', () => {
  it('applies items in order, each to the result of the ones before', () => {
    expect(
      applyReplacements('<p>Hello world</p>', [
        { find: 'Hello', replace: 'Goodbye' },
        { find: 'Goodbye world', replace: 'Goodbye moon' },
      ]),
    ).toEqual({ ok: true, body: '<p>Goodbye moon</p>' });
  });

  it('requires exactly one occurrence without all', () => {
    expect(applyReplacements('a b a', [{ find: 'a', replace: 'x' }])).toEqual({ ok: false, failures: [{ index: 0, matches: 2 }] });
    expect(applyReplacements('a b a', [{ find: 'c', replace: 'x' }])).toEqual({ ok: false, failures: [{ index: 0, matches: 0 }] });
    expect(applyReplacements('a b a', [{ find: 'b', replace: 'x' }])).toEqual({ ok: true, body: 'a x a' });
  });

  it('replaces every occurrence with all, and needs at least one', () => {
    expect(applyReplacements('a b a', [{ find: 'a', replace: 'x', all: true }])).toEqual({ ok: true, body: 'x b x' });
    expect(applyReplacements('a b a', [{ find: 'b', replace: 'x', all: true }])).toEqual({ ok: true, body: 'a x a' });
    expect(applyReplacements('a b a', [{ find: 'c', all: true }])).toEqual({ ok: false, failures: [{ index: 0, matches: 0 }] });
  });

  it('deletes when replace is missing', () => {
    expect(applyReplacements('<p>keep drop</p>', [{ find: ' drop' }])).toEqual({ ok: true, body: '<p>keep</p>' });
  });

  it('treats find and replace literally', () => {
    expect(applyReplacements('price $5 (net)', [{ find: '$5 (net)', replace: '$& $1 $$ $` $\'' }])).toEqual({
      ok: true,
      body: "price $& $1 $$ $` $'",
    });
    expect(applyReplacements('a.c abc', [{ find: 'a.c', replace: '[x]' }])).toEqual({ ok: true, body: '[x] abc' });
    expect(applyReplacements('x*x* x', [{ find: 'x*', replace: '$&$&', all: true }])).toEqual({ ok: true, body: '$&$&$&$& x' });
  });

  it('counts non-overlapping occurrences from the left', () => {
    expect(applyReplacements('aaa', [{ find: 'aa', replace: 'X' }])).toEqual({ ok: true, body: 'Xa' });
    expect(applyReplacements('aaaa', [{ find: 'aa', replace: 'X' }])).toEqual({ ok: false, failures: [{ index: 0, matches: 2 }] });
    expect(applyReplacements('aaaa', [{ find: 'aa', replace: 'X', all: true }])).toEqual({ ok: true, body: 'XX' });
  });

  it('is case-sensitive', () => {
    expect(applyReplacements('Shoes shoes', [{ find: 'Shoes', replace: 'Boots' }])).toEqual({ ok: true, body: 'Boots shoes' });
    expect(applyReplacements('Shoes', [{ find: 'SHOES' }])).toEqual({ ok: false, failures: [{ index: 0, matches: 0 }] });
  });

  it('reports every failing item with its index, evaluating later items without the failed ones', () => {
    const replacements = [
      { find: 'missing' },
      { find: 'one', replace: 'two' },
      { find: 'two' }, // "one" became a second "two": two matches
      { find: 'dup' },
      { find: 'end', replace: 'END' },
      { find: '' },
    ];
    const before = structuredClone(replacements);
    expect(applyReplacements('one two dup dup end', replacements)).toEqual({
      ok: false,
      failures: [
        { index: 0, matches: 0 },
        { index: 2, matches: 2 },
        { index: 3, matches: 2 },
        { index: 5, matches: 0 },
      ],
    });
    expect(replacements).toEqual(before);
  });

  it('a failed result carries no body', () => {
    const result = applyReplacements('abc', [{ find: 'x' }]);
    expect(result.ok).toBe(false);
    expect('body' in result).toBe(false);
  });

  it('returns the body unchanged for no replacements', () => {
    expect(applyReplacements('abc', [])).toEqual({ ok: true, body: 'abc' });
  });
});

describe('wordCount', () => {
  it.each([
    ['', 0],
    ['<p>   </p>', 0],
    ['<p>a</p><p>b</p>', 2],
    ['<p>one two  three\n four</p>', 4],
    ['<p>wo<b>rd</b> <a href="/x">li<em>nk</em></a></p>', 2],
    ['<ul><li>a</li><li>b</li></ul><h2>c</h2>', 3],
    ['a<br>b<hr>c<img src="x">d', 4],
    ['<table><tr><td>a</td><td>b</td></tr></table>', 2],
    ['<p>a&nbsp;b &amp; c&#32;d</p>', 5],
    ['<p>Tom&amp;Jerry</p>', 1],
    ['<p>text</p><script>var a = 1;</script><style>p { x: y }</style>', 1],
    ['<p>&lt;b&gt; not a tag</p>', 4],
  ])('%j has %i words', (html, count) => {
    expect(wordCount(html)).toBe(count);
  });
});

describe('replacement size limit', () => {
  it('refuses replacements that would grow the body past MAX_BODY_LENGTH', () => {
    const body = 'x '.repeat(1000);
    const huge = 'y'.repeat(10_000);
    expect(() => applyReplacements(body, [{ find: 'x', replace: huge, all: true }])).toThrowError(
      expect.objectContaining({ code: 'validation_failed' }),
    );
    expect(applyReplacements(body, [{ find: 'x', replace: 'yy', all: true }])).toEqual({ ok: true, body: 'yy '.repeat(1000) });
  });
});

describe('links inside links', () => {
  it('drops the outer link even when the parser closes it only at the end of the input (found by the property test)', () => {
    const input =
      '<a href="/x" data-service-protected="internal"><ul><a href="https://p.example/A" data-service-protected="backlink"></a><a ';
    const once = sanitizeTrusted(input);
    expect(once).toBe('<ul><a href="https://p.example/A" data-service-protected="backlink"></a></ul>');
    expect(sanitizeTrusted(once)).toBe(once);
  });
});
