import { html, type SafeHtml } from './html.js';
import type { SessionUser } from './session.js';

export interface PageOptions {
  title: string;
  body: SafeHtml;
  user?: SessionUser | null;
  csrfToken?: string;
  /** Extra scripts under /assets (no inline scripts: the CSP forbids them). */
  scripts?: string[];
  /** The navigation entry of this page, marked as the current one. */
  active?: NavEntry;
  /** A step that must end with a decision (the OAuth consent): no navigation, no links out. */
  focused?: boolean;
  /** The language of the main content when it is not English (a report speaks its site's). */
  lang?: string;
}

export type NavEntry = 'sites' | 'connect' | 'connections' | 'activity' | 'staff';

/** aria-current on the entry of the page being shown (styled as the active tab). */
const current = (options: PageOptions, entry: NavEntry) => (options.active === entry ? html` aria-current="page"` : '');

/** The one page frame of the UI: header, navigation, main content. */
export function page(options: PageOptions): SafeHtml {
  const { user } = options;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · Anchorage</title>
<link rel="stylesheet" href="/assets/app.css">
<link rel="icon" href="/assets/anchor.svg" type="image/svg+xml">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  ${
    options.focused
      ? html`<span class="brand"><img src="/assets/anchor.svg" alt="" width="22" height="22"> Anchorage</span>`
      : html`<a class="brand" href="/app"><img src="/assets/anchor.svg" alt="" width="22" height="22"> Anchorage</a>`
  }
  ${
    user
      ? html`<nav aria-label="Main">
    <a href="/app"${current(options, 'sites')}>Sites</a>
    <a href="/app/connect"${current(options, 'connect')}>API keys &amp; assistants</a>
    <a href="/app/connections"${current(options, 'connections')}>Connected apps</a>
    <a href="/app/activity"${current(options, 'activity')}>Activity</a>
    ${user.staff ? html`<a href="/app/staff"${current(options, 'staff')}>Accounts</a>` : ''}
  </nav>
  <form class="signout" method="post" action="/app/sign-out">
    <input type="hidden" name="_csrf" value="${options.csrfToken ?? ''}">
    <span class="who">${user.email}</span>
    <button type="submit" class="link">Sign out</button>
  </form>`
      : ''
  }
</header>
<main id="main" tabindex="-1"${options.lang && options.lang !== 'en' ? html` lang="${options.lang}"` : ''}>
${options.body}
</main>
${options.focused ? '' : html`<footer class="foot"><span>Anchorage</span> · <a href="/docs">API reference</a></footer>`}
${(options.scripts ?? []).map((src) => html`<script src="${src}" defer></script>`)}
</body>
</html>`;
}
