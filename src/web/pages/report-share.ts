import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError } from '../../core/errors.js';
import { reportLocale } from '../../core/i18n/locale.js';
import { toDay, toTimestamp } from '../../core/time.js';
import type { SiteRow } from '../../db/schema.js';
import type { MonthlyReport } from '../../services/report-pdf.js';
import { type ReportSubscription, SubscriptionRefused } from '../../services/report-mail.js';
import { defaultShareDays, maxShareDays, type ReportShareSummary } from '../../services/report-shares.js';
import { addMonths, badge, csrfField, externalLink, notice, tableWrap, timestamp } from '../components.js';
import { idParam, requireSignedIn, textField, type UiContext, uiOf, type WebOptions } from '../context.js';
import { html, type SafeHtml } from '../html.js';
import { loadMonthlyReport, reportMonth, reportRowLimit, sendPdf } from '../report-data.js';
import { articleRows, articlesHead, backlinkRows, backlinksHead, reportOverview, reportMonthHeading, reportPeriod, reportTitle, siteHeading } from '../report-view.js';
import { sendPage } from '../respond.js';

interface ShareForm {
  name?: unknown;
  days?: unknown;
}

/** A new link on its way to the page after the redirect, in the session's sealed flash. */
interface NewShareFlash {
  kind: 'report_share';
  id: number;
  token: string;
  name: string;
}

function newShareOf(flash: string | undefined): NewShareFlash | undefined {
  if (!flash) return undefined;
  const value = JSON.parse(flash) as Partial<NewShareFlash>;
  return value.kind === 'report_share' ? (value as NewShareFlash) : undefined;
}

const maxNameLength = 100;

/** The address of a share link (the token travels in the path, never in a log: see http/base.ts). */
export const shareUrl = (publicUrl: string, token: string): string => `${publicUrl}/share/${token}`;

/** Days a link lives, from the form: a whole number from 1 to the maximum, or undefined. */
function shareDays(value: string): number | undefined {
  if (value === '') return defaultShareDays;
  return /^\d{1,3}$/.test(value) && Number(value) >= 1 && Number(value) <= maxShareDays ? Number(value) : undefined;
}

function shareState(share: ReportShareSummary, now: string): SafeHtml {
  if (share.revoked_at) return html`${badge('revoked')} ${timestamp(share.revoked_at)}`;
  return share.expires_at <= now ? badge('expired') : badge('active');
}

function shareRows(ui: UiContext, siteId: number, shares: ReportShareSummary[], now: string): SafeHtml[] {
  return shares.map(
    (share) => html`<tr data-share-id="${share.id}"${share.revoked_at ? html` class="revoked"` : ''}>
  <td><strong>${share.name}</strong></td>
  <td>${timestamp(share.created_at)}</td>
  <td>${timestamp(share.expires_at)}</td>
  <td>${share.last_opened_at ? timestamp(share.last_opened_at) : html`<span class="muted">never</span>`}</td>
  <td>${shareState(share, now)}</td>
  <td>${
    share.revoked_at || share.expires_at <= now
      ? ''
      : html`<form method="post" action="/app/sites/${siteId}/shares/${share.id}/revoke" data-confirm="Revoke the link “${share.name}”? It stops working at once.">
    ${csrfField(ui.session.csrfToken)}
    <button type="submit" class="small danger">Revoke<span class="visually-hidden"> ${share.name}</span></button>
  </form>`
  }</td>
</tr>`,
  );
}

/** The link shown once, right after it was created. */
function newSharePanel({ token, name }: NewShareFlash, publicUrl: string): SafeHtml {
  return html`<section class="card new-key" aria-labelledby="new-share-h">
  <h2 id="new-share-h">Your new share link “${name}”</h2>
  <p><strong>Copy it now: it is shown only this once.</strong> Anyone with the link can read this site's monthly reports until it expires or you revoke it.</p>
  <div class="copy-row">
    <label for="new-share" class="visually-hidden">Share link</label>
    <input id="new-share" class="code key-value" type="text" value="${shareUrl(publicUrl, token)}" readonly data-select-on-focus>
    <button type="button" class="primary" data-copy="#new-share" hidden>Copy link</button>
  </div>
</section>`;
}

/** The site of a share page: one of the user's own account (staff look, they do not share). */
async function ownSite(options: WebOptions, ui: UiContext, id: string): Promise<SiteRow> {
  const site = await options.services.sites.visible(ui.actor, idParam(id, 'site'));
  if (site.account_id !== ui.user.accountId) throw new AppError('forbidden', 'Only the account that owns a site can share its report.');
  return site;
}

/** A page a visitor with a link sees: the report alone, no navigation, no way into the app. */
function sendSharePage(reply: FastifyReply, title: string, body: SafeHtml, status = 200, scripts: string[] = [], lang?: string): FastifyReply {
  reply.header('x-robots-tag', 'noindex, nofollow');
  return sendPage(reply, null, { title, body, focused: true, scripts, lang }, status);
}

const unknownLink = html`<section class="card narrow error-page">
  <p class="eyebrow">Error 404</p>
  <h1>No such report link</h1>
  <p>This address does not open a report. Check that you copied the whole link, or ask whoever sent it for a new one.</p>
</section>`;

function closedLink(state: 'revoked' | 'expired'): SafeHtml {
  return html`<section class="card narrow error-page">
  <p class="eyebrow">Error 410</p>
  <h1>${state === 'revoked' ? 'This report link was revoked' : 'This report link has expired'}</h1>
  <p>${state === 'revoked' ? 'Its owner has withdrawn it.' : 'It was valid for a limited time only.'} Ask whoever sent it for a new link.</p>
</section>`;
}

function unsubscribed(address: string | undefined): SafeHtml {
  return html`<section class="card narrow"><h1>${address ? 'Unsubscribed' : 'Nothing to unsubscribe'}</h1><p>${
    address ? `${address} no longer receives this monthly report.` : 'This link names no subscription: it was already used, or the subscription was removed.'
  }</p></section>`;
}

function subscriptionsSection(ui: UiContext, siteId: number, subscriptions: ReportSubscription[], mailOn: boolean, address: string): SafeHtml {
  return html`<section class="card" aria-labelledby="mail-h" id="mail">
  <h2 id="mail-h">Monthly e-mail</h2>
  <p class="muted">On the 1st of each month, each address below receives the report of the month before: the summary with the change from the month before, the PDF attached, and a one-click unsubscribe link.${
    mailOn ? '' : html` <strong>E-mail is off on this server (no SMTP_URL): nothing is sent until it is set.</strong>`
  }</p>
  <form method="post" action="/app/sites/${siteId}/subscriptions" class="stack">
    ${csrfField(ui.session.csrfToken)}
    <label for="mail-address">E-mail address</label>
    <input id="mail-address" name="address" type="email" maxlength="254" required value="${address}">
    <div class="form-actions"><button type="submit" class="primary">Add address</button></div>
  </form>
  ${tableWrap(
    'Addresses receiving the report',
    html`<tr><th scope="col">Address</th><th scope="col">Since</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>`,
    subscriptions.map(
      (s) => html`<tr data-subscription-id="${s.id}"><td>${s.address}</td><td>${timestamp(s.created_at)}</td><td><form method="post" action="/app/sites/${siteId}/subscriptions/${s.id}/remove">${csrfField(ui.session.csrfToken)}<button type="submit" class="small danger">Remove<span class="visually-hidden"> ${s.address}</span></button></form></td></tr>`,
    ),
    'No address receives this report yet.',
  )}
</section>`;
}

/** The report of a share link: the same numbers as the report page, every row, nothing to click into. */
function sharedReport(report: MonthlyReport, token: string, currentMonth: string): SafeHtml {
  const { site, month } = report;
  const locale = reportLocale(site);
  const { t } = locale;
  const { period } = reportPeriod(month, report.span, locale);
  const here = (m: string) => `/share/${token}?month=${m}`;
  const next = addMonths(month, 1);
  const more = (rows: number, kind: 'articles' | 'backlinks') => (rows >= reportRowLimit ? html`<p class="muted small">${t.firstRows(kind, locale.number(reportRowLimit))}</p>` : '');
  return html`<div class="page-head">
  <div>
    <p class="eyebrow">${t.monthlyReport}</p>
    <h1>${siteHeading(site, locale)} <span class="muted thin">· ${reportMonthHeading(month, report.span, locale)}</span></h1>
    <p class="muted">${site.website_url ? externalLink(site.website_url) : ''}</p>
  </div>
  <div class="actions no-print"><a class="button" href="/share/${token}/report.pdf?month=${month}" download>${t.downloadPdf}</a></div>
</div>
<nav class="month-picker no-print" aria-label="${t.months}">
  <a class="button small" href="${here(addMonths(month, -1))}" rel="prev">← ${locale.month(addMonths(month, -1), true)}</a>
  ${next <= currentMonth ? html`<a class="button small" href="${here(next)}" rel="next">${locale.month(next, true)} →</a>` : ''}
</nav>
${reportOverview(report, locale)}
<section aria-labelledby="articles-h" class="card">
  <h2 id="articles-h">${t.articlesPublishedIn(period)}</h2>
  ${tableWrap(t.articlesPublishedIn(period), articlesHead(locale), articleRows(report.articles, locale, false), t.noArticlesPublished(period))}
  ${more(report.articles.length, 'articles')}
</section>
<section aria-labelledby="backlinks-h" class="card">
  <h2 id="backlinks-h">${t.backlinksAcquiredIn(period)}</h2>
  ${tableWrap(t.backlinksAcquiredIn(period), backlinksHead(locale), backlinkRows(report.backlinks, locale), t.noBacklinksAcquired(period))}
  ${more(report.backlinks.length, 'backlinks')}
</section>`;
}

/** Share links: created, listed and revoked by the site's account; opened by anyone holding one. */
export async function reportShareRoutes(app: FastifyInstance, options: WebOptions) {
  const { services, settings } = options;
  const currentMonth = () => toDay(services.clock.now()).slice(0, 7);

  await app.register(async (signedIn) => {
    signedIn.addHook('preHandler', requireSignedIn(options));

    async function render(ui: UiContext, site: SiteRow, extra: { message?: SafeHtml; created?: SafeHtml; name?: string; days?: string; address?: string }) {
      const shares = await services.reportShares.list(ui.user.accountId, site.id);
      const now = toTimestamp(services.clock.now());
      return {
        title: `Share links · ${site.name ?? `Site ${site.id}`}`,
        active: 'sites' as const,
        scripts: ['/assets/copy.js'],
        body: html`<nav class="crumbs" aria-label="Breadcrumb"><a href="/app">Sites</a> <span aria-hidden="true">/</span> <a href="/app/sites/${site.id}">${siteHeading(site)}</a> <span aria-hidden="true">/</span> <span aria-current="page">Share links</span></nav>
<div class="page-head"><div>
  <h1>Share the report of ${siteHeading(site)}</h1>
  <p class="muted">A share link opens this site's monthly reports, read-only, for someone without an account: the report and its PDF, nothing else. Each opening is in your <a href="/app/activity">activity log</a>.</p>
</div></div>
${extra.message ?? ''}
${extra.created ?? ''}
<section class="card" aria-labelledby="create-share-h">
  <h2 id="create-share-h">Create a share link</h2>
  <form method="post" action="/app/sites/${site.id}/shares" class="stack">
    ${csrfField(ui.session.csrfToken)}
    <label for="share-name">Name</label>
    <input id="share-name" name="name" type="text" maxlength="${maxNameLength}" required placeholder="e.g. For the client" value="${extra.name ?? ''}">
    <label for="share-days">Valid for (days)</label>
    <input id="share-days" name="days" type="number" min="1" max="${maxShareDays}" value="${extra.days ?? String(defaultShareDays)}" required>
    <div class="form-actions"><button type="submit" class="primary">Create link</button></div>
  </form>
</section>
${subscriptionsSection(ui, site.id, await services.reportSubscriptions.list(ui.user.accountId, site.id), settings.reportMail.smtpUrl !== undefined, extra.address ?? '')}
<section class="card" aria-labelledby="shares-h">
  <h2 id="shares-h">Links to this report</h2>
  ${tableWrap(
    'Share links',
    html`<tr><th scope="col">Name</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last opened</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>`,
    shareRows(ui, site.id, shares, now),
    'No share links yet.',
  )}
</section>`,
      };
    }

    signedIn.get<{ Params: { id: string }; Querystring: { created?: string; revoked?: string } }>('/app/sites/:id/shares', async (request, reply) => {
      const ui = uiOf(request);
      const site = await ownSite(options, ui, request.params.id);
      const createdId = textField(request.query.created);
      if (createdId !== '') {
        const fresh = newShareOf(await services.sessions.takeFlash(ui.session.id));
        if (fresh && String(fresh.id) === createdId) return sendPage(reply, ui, await render(ui, site, { created: newSharePanel(fresh, settings.publicUrl) }));
        const message = notice('info', 'The link was created and shown once, when you created it; Anchorage cannot show it again. If you did not copy it, revoke it and create another.');
        return sendPage(reply, ui, await render(ui, site, { message }));
      }
      const revoked = textField(request.query.revoked);
      const message =
        revoked === '1' ? notice('success', 'The link was revoked. It no longer opens the report.') : revoked === '0' ? notice('info', 'That link was already revoked or has expired.') : undefined;
      return sendPage(reply, ui, await render(ui, site, { message }));
    });

    signedIn.post<{ Params: { id: string }; Body: ShareForm }>('/app/sites/:id/shares', async (request, reply) => {
      const ui = uiOf(request);
      const site = await ownSite(options, ui, request.params.id);
      const name = textField(request.body?.name).trim();
      const daysText = textField(request.body?.days).trim();
      const days = shareDays(daysText);
      if (name === '' || [...name].length > maxNameLength || days === undefined) {
        const problem = days === undefined ? `A link is valid for 1 to ${maxShareDays} days.` : `Give the link a name of 1 to ${maxNameLength} characters.`;
        return sendPage(reply, ui, await render(ui, site, { message: notice('error', problem), name, days: daysText }), 422);
      }
      const created = await services.reportShares.create(site, ui.user.userId, { name, days });
      // POST-redirect-GET: a reload never creates a second link; the token is shown by the next page only.
      const flash: NewShareFlash = { kind: 'report_share', id: created.id, token: created.token, name };
      await services.sessions.setFlash(ui.session.id, JSON.stringify(flash));
      return reply.redirect(`/app/sites/${site.id}/shares?created=${created.id}`, 303);
    });

    signedIn.post<{ Params: { id: string }; Body: { address?: unknown } }>('/app/sites/:id/subscriptions', async (request, reply) => {
      const ui = uiOf(request);
      const site = await ownSite(options, ui, request.params.id);
      const address = textField(request.body?.address);
      try {
        await services.reportSubscriptions.subscribe(site, ui.user.userId, address);
      } catch (error) {
        if (!(error instanceof SubscriptionRefused)) throw error;
        return sendPage(reply, ui, await render(ui, site, { message: notice('error', error.message), address }), 422);
      }
      return reply.redirect(`/app/sites/${site.id}/shares#mail`, 303);
    });

    signedIn.post<{ Params: { id: string; subscriptionId: string } }>('/app/sites/:id/subscriptions/:subscriptionId/remove', async (request, reply) => {
      const ui = uiOf(request);
      const site = await ownSite(options, ui, request.params.id);
      const id = /^[1-9]\d{0,8}$/.test(request.params.subscriptionId) ? Number(request.params.subscriptionId) : 0;
      await services.reportSubscriptions.remove(ui.user.accountId, site.id, id);
      return reply.redirect(`/app/sites/${site.id}/shares#mail`, 303);
    });

    signedIn.post<{ Params: { id: string; shareId: string } }>('/app/sites/:id/shares/:shareId/revoke', async (request, reply) => {
      const ui = uiOf(request);
      const site = await ownSite(options, ui, request.params.id);
      // An id that names no link revokes nothing, like an id of another site's link.
      const shareId = /^[1-9]\d{0,8}$/.test(request.params.shareId) ? Number(request.params.shareId) : 0;
      const revoked = await services.reportShares.revoke(ui.user.accountId, site.id, shareId);
      return reply.redirect(`/app/sites/${site.id}/shares?revoked=${revoked ? 1 : 0}`, 303);
    });
  });

  /** The month a link shows (`reportMonth`), or the page saying why there is no report for the month asked for. */
  const shownMonth = (value: unknown, token: string): string | SafeHtml => {
    const checked = reportMonth(textField(value), services.clock.now());
    if ('month' in checked) return checked.month;
    return html`<section class="card narrow error-page">
  <p class="eyebrow">Error 422</p>
  <h1>No report for this month</h1>
  <p>${checked.problem}</p>
  <p><a class="button" href="/share/${token}">Show ${currentMonth()}</a></p>
</section>`;
  };

  app.get<{ Params: { token: string }; Querystring: { month?: string } }>('/share/:token', async (request, reply) => {
    const opened = await services.reportShares.open(request.params.token, request.info);
    if (!opened) return sendSharePage(reply, 'No such report link', unknownLink, 404);
    if (opened.state !== 'open') return sendSharePage(reply, 'Report link closed', closedLink(opened.state), 410);
    const month = shownMonth(request.query.month, request.params.token);
    if (typeof month !== 'string') return sendSharePage(reply, 'No report for this month', month, 422);
    const report = await loadMonthlyReport(services, opened.actor, opened.site, month);
    await services.reportShares.recordOpen(opened, 'openReportShare', month, 200);
    return sendSharePage(
      reply,
      reportTitle(opened.site, month, report.span, reportLocale(opened.site)),
      sharedReport(report, request.params.token, currentMonth()),
      200,
      ['/assets/vendor/chart.umd.min.js', '/assets/report.js'],
      reportLocale(opened.site).language,
    );
  });

  // One click: the e-mail's link shows a button (link scanners only GET); mail clients POST (RFC 8058).
  app.get<{ Params: { token: string } }>('/unsubscribe/:token', async (request, reply) => {
    if (!(await services.reportSubscriptions.exists(request.params.token))) return sendSharePage(reply, 'Not subscribed', unsubscribed(undefined), 404);
    return sendSharePage(
      reply,
      'Unsubscribe',
      html`<section class="card narrow"><h1>Stop the monthly report?</h1><form method="post" action="/unsubscribe/${request.params.token}"><button type="submit" class="primary">Unsubscribe</button></form></section>`,
    );
  });

  app.post<{ Params: { token: string } }>('/unsubscribe/:token', async (request, reply) => {
    const address = await services.reportSubscriptions.unsubscribe(request.params.token);
    return sendSharePage(reply, address ? 'Unsubscribed' : 'Not subscribed', unsubscribed(address), address ? 200 : 404);
  });

  app.get<{ Params: { token: string }; Querystring: { month?: string } }>('/share/:token/report.pdf', async (request, reply) => {
    const opened = await services.reportShares.open(request.params.token, request.info);
    if (!opened) return sendSharePage(reply, 'No such report link', unknownLink, 404);
    if (opened.state !== 'open') return sendSharePage(reply, 'Report link closed', closedLink(opened.state), 410);
    const month = shownMonth(request.query.month, request.params.token);
    if (typeof month !== 'string') return sendSharePage(reply, 'No report for this month', month, 422);
    const pdf = await services.htmlPool.renderReportPdf(opened.actor.accountId, await loadMonthlyReport(services, opened.actor, opened.site, month));
    await services.reportShares.recordOpen(opened, 'downloadReportSharePdf', `${month}.pdf`, 200);
    return sendPdf(reply, `site-${opened.site.id}-report-${month}.pdf`, pdf);
  });
}
