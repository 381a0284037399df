import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.js';
import { toDay } from '../../core/time.js';
import type { DeletedAccount } from '../../services/account-deletion.js';
import type { CreatedAccount, NewAccount, NewSite } from '../../services/onboarding.js';
import { csrfField, day, notice, tableWrap } from '../components.js';
import { idParam, textField, type UiContext, uiOf, type WebOptions } from '../context.js';
import { html, type SafeHtml } from '../html.js';
import { sendPage } from '../respond.js';
import { siteCard } from './sites.js';

/** The UI context of a staff member; anyone else gets 403. */
export function staffOnly(request: FastifyRequest): UiContext {
  const ui = uiOf(request);
  if (!ui.user.staff) throw new AppError('forbidden', 'This page is for Anchorage staff only.');
  return ui;
}

/** A new account's password link on its way to the account's page, in the session's sealed flash. */
interface NewLinkFlash extends Pick<CreatedAccount, 'accountId' | 'email' | 'link' | 'expiresAt' | 'mail'> {
  kind: 'password_link';
}

/** A deleted account's name and what went with it, on its way to the Accounts page. */
interface DeletedFlash extends Pick<DeletedAccount, 'name' | 'sites' | 'articles' | 'backlinks' | 'users'> {
  kind: 'account_deleted';
}

function newLinkOf(flash: string | undefined, accountId: number): NewLinkFlash | undefined {
  if (!flash) return undefined;
  const value = JSON.parse(flash) as Partial<NewLinkFlash>;
  return value.kind === 'password_link' && value.accountId === accountId ? (value as NewLinkFlash) : undefined;
}

/** The form's problems, field by field, from a `validation_failed` error (any other error is thrown on). */
function problemsOf(error: unknown): Record<string, string[]> {
  if (error instanceof AppError && error.code === 'validation_failed') return error.details.fields ?? {};
  throw error;
}

const problemList = (problems: Record<string, string[]>, labels: Record<string, string>): SafeHtml =>
  notice('error', html`Nothing was saved. <ul>${Object.entries(problems).map(([name, messages]) => html`<li><strong>${labels[name] ?? name}</strong>: ${messages.join(' ')}</li>`)}</ul>`);

const accountLabels = { account: 'Account name', email: 'E-mail' };
const siteLabels = { name: 'Name', website_url: 'Website address', language: 'Language' };

/** The link shown once, right after the account was created, with a copy button. */
function newLinkPanel({ email, link, expiresAt, mail }: NewLinkFlash): SafeHtml {
  const mailed = {
    sent: notice('success', html`The link was also sent to <strong>${email}</strong>.`),
    off: notice('info', 'E-mail is not set up on this service (SMTP_URL): pass the link on yourself.'),
    failed: notice('warning', html`Sending the link to <strong>${email}</strong> failed: pass it on yourself.`),
  }[mail];
  return html`<section class="card new-key" aria-labelledby="new-link-h" data-password-link>
  <h2 id="new-link-h">Password link for ${email}</h2>
  <p><strong>Copy it now: it is shown only this once.</strong> It lets ${email} choose a password and sign in. It works once, until ${day(expiresAt)}; Anchorage keeps only a fingerprint of it.</p>
  <div class="copy-row">
    <label for="new-link" class="visually-hidden">Password link</label>
    <input id="new-link" class="code key-value" type="text" value="${link}" readonly data-select-on-focus>
    <button type="button" class="primary" data-copy="#new-link" hidden>Copy link</button>
  </div>
  ${mailed}
</section>`;
}

function newAccountForm(ui: UiContext, values: NewAccount, problems: Record<string, string[]>): SafeHtml {
  return html`<section class="card" aria-labelledby="new-account-h">
  <h2 id="new-account-h">New customer account</h2>
  ${Object.keys(problems).length > 0 ? problemList(problems, accountLabels) : ''}
  <form method="post" action="/app/staff/accounts" class="stack">
    ${csrfField(ui.session.csrfToken)}
    <label for="na-account">Account name <span class="muted small">(the company; the e-mail if left empty)</span></label>
    <input id="na-account" name="account" type="text" maxlength="200" value="${values.account}" autocomplete="off">
    <label for="na-email">First user’s e-mail</label>
    <input id="na-email" name="email" type="email" maxlength="254" value="${values.email}" autocomplete="off" required>
    <p class="muted small">The user gets a one-time link to choose a password, shown to you once and sent by e-mail when the service sends e-mail.</p>
    <div class="form-actions"><button type="submit" class="primary">Create account</button></div>
  </form>
</section>`;
}

/** Users who have not chosen a password yet: a new link each (their earlier links stop working). */
function awaitingPassword(ui: UiContext, accountId: number, users: { id: number; email: string }[]): SafeHtml {
  if (users.length === 0) return html``;
  return html`<section class="card" aria-labelledby="awaiting-h">
  <h2 id="awaiting-h">Waiting for a password</h2>
  <p class="muted small">These users have not chosen a password yet. A new link replaces the ones given before.</p>
  ${tableWrap(
    'Users waiting for a password',
    html`<tr><th scope="col">User</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>`,
    users.map(
      (user) => html`<tr><td>${user.email}</td><td><form method="post" action="/app/staff/accounts/${accountId}/users/${user.id}/link">
    ${csrfField(ui.session.csrfToken)}
    <button type="submit" class="small">New password link<span class="visually-hidden"> for ${user.email}</span></button>
  </form></td></tr>`,
    ),
    'Nobody.',
  )}
</section>`;
}

function newSiteForm(ui: UiContext, accountId: number, values: NewSite, problems: Record<string, string[]>): SafeHtml {
  return html`<section class="card" aria-labelledby="new-site-h">
  <h2 id="new-site-h">Add a site</h2>
  ${Object.keys(problems).length > 0 ? problemList(problems, siteLabels) : ''}
  <form method="post" action="/app/staff/accounts/${accountId}/sites" class="stack">
    ${csrfField(ui.session.csrfToken)}
    <label for="ns-name">Name</label>
    <input id="ns-name" name="name" type="text" value="${values.name}" autocomplete="off">
    <label for="ns-url">Website address</label>
    <input id="ns-url" name="website_url" type="url" value="${values.website_url}" placeholder="https://www.example.com" autocomplete="off" required>
    <label for="ns-language">Language <span class="muted small">(of its reports: en, de, es, fr, it, nl …)</span></label>
    <input id="ns-language" name="language" type="text" value="${values.language}" placeholder="en" autocomplete="off">
    <p class="muted small">Articles and backlinks come with the provider’s import; a later import finds this site by its account and address.</p>
    <div class="form-actions"><button type="submit" class="primary">Add site</button></div>
  </form>
</section>`;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function deletedNotice(flash: string | undefined): SafeHtml {
  if (!flash) return html``;
  const deleted = JSON.parse(flash) as Partial<DeletedFlash>;
  if (deleted.kind !== 'account_deleted') return html``;
  const { name, users = 0, sites = 0, articles = 0, backlinks = 0 } = deleted;
  return notice('success', html`The account <strong>${name}</strong> was deleted, with ${plural(users, 'user', 'users')}, ${plural(sites, 'site', 'sites')}, ${plural(articles, 'article', 'articles')} and ${plural(backlinks, 'backlink', 'backlinks')}. Its activity records are kept without personal data.`);
}

/** Export and import: the account's data as an import file, and the way in for a delivery. */
function dataSection(accountId: number): SafeHtml {
  return html`<section class="card" aria-labelledby="data-h">
  <h2 id="data-h">Data</h2>
  <p class="muted small">The export is the account's sites, articles (current bodies) and backlinks in the import format: what <code>anchorage export</code> writes.</p>
  <div class="form-actions">
    <a class="button" href="/app/staff/accounts/${accountId}/export" download>Download export</a>
    <a class="button" href="/app/staff/imports">Import a file</a>
  </div>
</section>`;
}

/** Deleting the account: the name typed as the confirmation; never staff's own account or one holding staff. */
function deleteSection(ui: UiContext, account: { id: number; name: string }, holdsStaff: boolean, problems: Record<string, string[]>): SafeHtml {
  const body = account.id === ui.user.accountId
    ? html`<p class="muted">This is your own account: staff cannot delete it.</p>`
    : holdsStaff
      ? html`<p class="muted">This account holds a staff user: Anchorage does not delete staff accounts.</p>`
      : html`<p>Deletes the account and everything it owns: its users and their sign-ins, API keys and assistant connections; its sites with their articles, revisions, backlinks, share links and report e-mails; and the uploaded images no other account uses. Its activity records are kept without personal data. <strong>This cannot be undone</strong>: download the export first if the customer wants their data.</p>
  ${Object.keys(problems).length > 0 ? notice('error', html`Nothing was deleted. ${Object.values(problems).flat().join(' ')}`) : ''}
  <form method="post" action="/app/staff/accounts/${account.id}/delete" class="stack">
    ${csrfField(ui.session.csrfToken)}
    <label for="da-confirm">Type the account’s name, <strong>${account.name}</strong>, to confirm</label>
    <input id="da-confirm" name="confirm" type="text" autocomplete="off" required>
    <div class="form-actions"><button type="submit" class="danger">Delete this account</button></div>
  </form>`;
  return html`<section class="card" aria-labelledby="delete-h">
  <h2 id="delete-h">Delete the account</h2>
  ${body}
</section>`;
}

/** The staff side: every account, its users and sites; creating accounts (with their first user) and sites. */
export async function staffPages(app: FastifyInstance, options: WebOptions) {
  const { services } = options;

  async function accountsPage(ui: UiContext, values: NewAccount = { account: '', email: '' }, problems: Record<string, string[]> = {}, done: SafeHtml = html``) {
    const accounts = await services.uiQueries.accounts();
    return {
      title: 'Accounts',
      active: 'staff' as const,
      body: html`<div class="page-head">
  <div>
    <h1>Accounts</h1>
    <p class="muted">Every customer account. As staff you can open any account’s site reports and articles, create accounts, add sites, import deliveries, and export or delete an account; changing articles is left to their owners.</p>
  </div>
</div>
${done}
${newAccountForm(ui, values, problems)}
<section class="card">
  ${tableWrap(
    'Accounts',
    html`<tr><th scope="col">Account</th><th scope="col">Users</th><th scope="col" class="num">Sites</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>`,
    accounts.map(
      (account) => html`<tr${account.id === ui.user.accountId ? html` class="current"` : ''}>
  <td><strong>${account.name}</strong>${account.id === ui.user.accountId ? html` <span class="badge badge-current">yours</span>` : ''}</td>
  <td>${account.users.map((user, i) => html`${i > 0 ? html`<br>` : ''}${user.email}${user.staff ? html` <span class="badge badge-staff">staff</span>` : ''}`)}</td>
  <td class="num">${account.sites}</td>
  <td>${day(account.created_at)}</td>
  <td><a class="button small" href="/app/staff/accounts/${account.id}">${account.sites > 0 ? 'View sites' : 'Add a site'}<span class="visually-hidden"> of ${account.name}</span></a></td>
</tr>`,
    ),
    'No accounts yet.',
  )}
</section>`,
    };
  }

  async function accountPage(
    ui: UiContext,
    accountId: number,
    extra: { created?: SafeHtml; values?: NewSite; problems?: Record<string, string[]>; deleteProblems?: Record<string, string[]> } = {},
  ) {
    const account = await services.uiQueries.account(accountId);
    if (!account) throw new AppError('not_found', 'No account with this id.');
    const sites = await services.uiQueries.sitesOfAccount(accountId);
    const now = services.clock.now();
    const month = toDay(now).slice(0, 7);
    const stats = await Promise.all(sites.map((site) => services.stats.forRange(site.id, `${month}-01`, toDay(now))));
    const waiting = await services.onboarding.awaitingPassword(accountId);
    const holdsStaff = await services.accountDeletion.holdsStaff(accountId);
    return {
      title: account.name,
      active: 'staff' as const,
      body: html`<nav class="crumbs" aria-label="Breadcrumb"><a href="/app/staff">Accounts</a> <span aria-hidden="true">/</span> <span aria-current="page">${account.name}</span></nav>
<div class="page-head"><div><h1>${account.name}</h1><p class="muted">${sites.length} ${sites.length === 1 ? 'site' : 'sites'} · staff view: reports and articles are read-only here</p></div></div>
${extra.created ?? ''}
${sites.length === 0 ? html`<p class="empty">This account has no sites.</p>` : html`<ul class="site-grid">${sites.map((site, i) => siteCard(site, stats[i], month))}</ul>`}
${newSiteForm(ui, accountId, extra.values ?? { name: '', website_url: '', language: '' }, extra.problems ?? {})}
${awaitingPassword(ui, accountId, waiting)}
${dataSection(accountId)}
${deleteSection(ui, account, holdsStaff, extra.deleteProblems ?? {})}`,
    };
  }

  /**
   * POST-redirect-GET: a reload never creates a second account or link. The link is shown by the
   * next page only (never in a URL or a log), from the session's sealed flash.
   */
  async function showLinkOnce(ui: UiContext, reply: FastifyReply, created: CreatedAccount) {
    const { accountId, email, link, expiresAt, mail } = created;
    const flash: NewLinkFlash = { kind: 'password_link', accountId, email, link, expiresAt, mail };
    await services.sessions.setFlash(ui.session.id, JSON.stringify(flash));
    return reply.redirect(`/app/staff/accounts/${accountId}?created=1`, 303);
  }

  app.get<{ Querystring: { deleted?: string } }>('/app/staff', async (request, reply) => {
    const ui = staffOnly(request);
    const done = textField(request.query.deleted) === '' ? html`` : deletedNotice(await services.sessions.takeFlash(ui.session.id));
    return sendPage(reply, ui, await accountsPage(ui, undefined, undefined, done));
  });

  app.post<{ Body: Record<string, unknown> | undefined }>('/app/staff/accounts', async (request, reply) => {
    const ui = staffOnly(request);
    const values: NewAccount = { account: textField(request.body?.account), email: textField(request.body?.email) };
    let created: CreatedAccount;
    try {
      created = await services.onboarding.createAccount(ui.actor, values);
    } catch (error) {
      return sendPage(reply, ui, await accountsPage(ui, values, problemsOf(error)), 422);
    }
    return showLinkOnce(ui, reply, created);
  });

  app.post<{ Params: { id: string; user: string } }>('/app/staff/accounts/:id/users/:user/link', async (request, reply) => {
    const ui = staffOnly(request);
    const accountId = idParam(request.params.id, 'account');
    const userId = idParam(request.params.user, 'user');
    return showLinkOnce(ui, reply, await services.onboarding.newLink(ui.actor, accountId, userId));
  });

  app.get<{ Params: { id: string }; Querystring: { created?: string } }>('/app/staff/accounts/:id', async (request, reply) => {
    const ui = staffOnly(request);
    const accountId = idParam(request.params.id, 'account');
    if (textField(request.query.created) === '') return sendPage(reply, ui, await accountPage(ui, accountId));
    const fresh = newLinkOf(await services.sessions.takeFlash(ui.session.id), accountId);
    const created = fresh
      ? newLinkPanel(fresh)
      : notice('info', 'The password link was shown once, when it was created; Anchorage cannot show it again. Create a new one below if it was lost.');
    return sendPage(reply, ui, await accountPage(ui, accountId, { created }));
  });

  app.post<{ Params: { id: string }; Body: Record<string, unknown> | undefined }>('/app/staff/accounts/:id/sites', async (request, reply) => {
    const ui = staffOnly(request);
    const accountId = idParam(request.params.id, 'account');
    const values: NewSite = { name: textField(request.body?.name), website_url: textField(request.body?.website_url), language: textField(request.body?.language) };
    try {
      await services.onboarding.addSite(ui.actor, accountId, values);
    } catch (error) {
      return sendPage(reply, ui, await accountPage(ui, accountId, { values, problems: problemsOf(error) }), 422);
    }
    return reply.redirect(`/app/staff/accounts/${accountId}`, 303);
  });

  app.get<{ Params: { id: string } }>('/app/staff/accounts/:id/export', async (request, reply) => {
    const ui = staffOnly(request);
    const accountId = idParam(request.params.id, 'account');
    const pieces = await services.exporter.staffDownload(ui.actor, accountId);
    return reply
      .type('application/json; charset=utf-8')
      .header('content-disposition', `attachment; filename="anchorage-account-${accountId}.json"`)
      .header('cache-control', 'no-store')
      .send(Readable.from(pieces));
  });

  app.post<{ Params: { id: string }; Body: Record<string, unknown> | undefined }>('/app/staff/accounts/:id/delete', async (request, reply) => {
    const ui = staffOnly(request);
    const accountId = idParam(request.params.id, 'account');
    let deleted: DeletedAccount;
    try {
      deleted = await services.accountDeletion.deleteAccount(accountId, textField(request.body?.confirm), ui.actor);
    } catch (error) {
      return sendPage(reply, ui, await accountPage(ui, accountId, { deleteProblems: problemsOf(error) }), 422);
    }
    const { name, users, sites, articles, backlinks } = deleted;
    const flash: DeletedFlash = { kind: 'account_deleted', name, users, sites, articles, backlinks };
    await services.sessions.setFlash(ui.session.id, JSON.stringify(flash));
    return reply.redirect('/app/staff?deleted=1', 303);
  });
}
