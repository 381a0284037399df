import type { FastifyInstance } from 'fastify';
import { AppError } from '../../core/errors.js';
import { type ApiKeySummary, type CreatedKey, TooManyKeysError } from '../../services/keys.js';
import { badge, csrfField, notice, tableWrap, timestamp } from '../components.js';
import { idParam, textField, type UiContext, uiOf, type WebOptions } from '../context.js';
import { html, type SafeHtml } from '../html.js';
import { sendPage } from '../respond.js';

interface KeyForm {
  name?: unknown;
  read_only?: unknown;
}

/** A new key on its way to the page after the redirect, in the session's sealed flash. */
interface NewKeyFlash {
  kind: 'api_key';
  id: number;
  key: string;
  name: string;
  readOnly: boolean;
}

function newKeyOf(flash: string | undefined): NewKeyFlash | undefined {
  if (!flash) return undefined;
  const value = JSON.parse(flash) as Partial<NewKeyFlash>;
  return value.kind === 'api_key' ? (value as NewKeyFlash) : undefined;
}

const maxNameLength = 100;

function keyRows(ui: UiContext, keys: ApiKeySummary[]): SafeHtml[] {
  return keys.map(
    (key) => html`<tr${key.revoked_at ? html` class="revoked"` : ''} data-key-id="${key.id}">
  <td><strong>${key.name}</strong></td>
  <td><code>${key.display_prefix}…</code></td>
  <td>${key.read_only ? badge('read-only', 'readonly') : badge('read-write', 'readwrite')}</td>
  <td>${timestamp(key.created_at)}</td>
  <td>${key.last_used_at ? timestamp(key.last_used_at) : html`<span class="muted">never</span>`}</td>
  <td>${key.revoked_at ? html`${badge('revoked')} ${timestamp(key.revoked_at)}` : badge('active')}</td>
  <td>${
    key.revoked_at
      ? ''
      : html`<form method="post" action="/app/connect/keys/${key.id}/revoke" data-confirm="Revoke the key “${key.name}”? Tools using it stop working at once.">
    ${csrfField(ui.session.csrfToken)}
    <button type="submit" class="small danger">Revoke<span class="visually-hidden"> ${key.name}</span></button>
  </form>`
  }</td>
</tr>`,
  );
}

/** The key shown once, right after it was created, with a copy button. */
function newKeyPanel({ key, name, readOnly }: NewKeyFlash, publicUrl: string): SafeHtml {
  return html`<section class="card new-key" aria-labelledby="new-key-h">
  <h2 id="new-key-h">Your new API key “${name}”</h2>
  <p><strong>Copy it now: it is shown only this once.</strong> Anchorage keeps only a fingerprint of it, so nobody can show it to you again. If you lose it, revoke it and create another.</p>
  <div class="copy-row">
    <label for="new-key" class="visually-hidden">API key</label>
    <input id="new-key" class="code key-value" type="text" value="${key}" readonly data-select-on-focus>
    <button type="button" class="primary" data-copy="#new-key" hidden>Copy key</button>
  </div>
  <p class="muted small">${readOnly ? 'This key is read-only: it can list and read, but not change articles.' : 'This key can read and change articles (edits are recorded as revisions with origin API).'}</p>
  <p>Try it:</p>
  <pre class="code-block"><code id="curl-example">curl -H "Authorization: Bearer ${key}" \\
  ${publicUrl}/api/v1/sites</code></pre>
  <button type="button" class="small" data-copy="#curl-example" hidden>Copy command</button>
</section>`;
}

/** Way 1: a website, script or reporting tool calls the REST API with a key. */
function restHowTo(publicUrl: string): SafeHtml {
  return html`<section class="card" aria-labelledby="rest-h" id="rest">
  <h2 id="rest-h">1. A website or tool: an API key over REST</h2>
  <ol class="steps">
    <li>Create a key with the form on this page and give it a name you will recognise, such as the tool or the person using it. Choose <em>read-only</em> for reporting tools that never change content.</li>
    <li>Copy the key when it is shown: it is displayed once only.</li>
    <li>Send it with every request, either as <code>Authorization: Bearer &lt;key&gt;</code> or as <code>X-API-Key: &lt;key&gt;</code>.</li>
  </ol>
  <pre class="code-block"><code id="rest-example">curl -H "Authorization: Bearer &lt;your key&gt;" \\
  ${publicUrl}/api/v1/sites

curl -H "X-API-Key: &lt;your key&gt;" \\
  "${publicUrl}/api/v1/sites/&lt;site id&gt;/stats?period=last_month"</code></pre>
  <button type="button" class="small" data-copy="#rest-example" hidden>Copy commands</button>
  <p class="muted small">Every call is listed in the <a href="/app/activity">activity log</a>. Keys allow 60 requests per minute. The full reference is at <a href="/docs">${publicUrl}/docs</a> and the OpenAPI document at <code>${publicUrl}/api/v1/openapi.json</code>.</p>
</section>`;
}

/** Way 2: an AI assistant connects over MCP at its address, with a sign-in instead of a key. */
function mcpHowTo(mcpUrl: string): SafeHtml {
  return html`<section class="card" aria-labelledby="mcp-h" id="mcp">
  <h2 id="mcp-h">2. An AI assistant: MCP, no key needed</h2>
  <p>Claude, ChatGPT and other assistants connect to Anchorage's MCP server. Give the assistant this address; it opens the Anchorage sign-in, you see which application is asking, and press <strong>Allow</strong> (read and edit, or read only).</p>
  <label for="mcp-url"><strong>MCP server address</strong></label>
  <div class="copy-row">
    <input id="mcp-url" class="code" type="text" value="${mcpUrl}" readonly data-select-on-focus>
    <button type="button" class="primary" data-copy="#mcp-url" hidden>Copy address</button>
  </div>
  <ul class="steps">
    <li><strong>Claude</strong> (claude.ai, Claude Desktop): Settings → Connectors → <em>Add custom connector</em>, name <em>Anchorage</em>, the address above, then <em>Connect</em>. Claude connects from Anthropic's servers, so the address must be public and https.</li>
    <li><strong>Claude Code</strong>: run the command below, then <code>/mcp</code> in Claude Code to sign in.</li>
    <li><strong>ChatGPT</strong>: Settings → Apps &amp; Connectors → Advanced settings → <em>Developer mode</em>, then <em>Create</em> a connector with the address above and authentication <em>OAuth</em>.</li>
  </ul>
  <pre class="code-block"><code id="mcp-example">claude mcp add --transport http anchorage ${mcpUrl}</code></pre>
  <button type="button" class="small" data-copy="#mcp-example" hidden>Copy command</button>
  <p class="muted small">Assistants see only your own account, follow the same limits as keys, and every call is in the <a href="/app/activity">activity log</a>. Disconnect any of them under <a href="/app/connections">Connected apps</a>.</p>
</section>`;
}

/** API keys and assistants: create, copy once, list and revoke API keys; how an assistant connects over MCP. */
export async function connectPages(app: FastifyInstance, options: WebOptions) {
  const { services, settings } = options;

  async function render(ui: UiContext, extra: { message?: SafeHtml; created?: SafeHtml; name?: string; readOnly?: boolean }) {
    const keys = await services.keys.list(ui.user.accountId);
    const active = keys.filter((key) => !key.revoked_at).length;
    return {
      title: 'API keys and assistants',
      active: 'connect' as const,
      scripts: ['/assets/copy.js'],
      body: html`<div class="page-head">
  <div>
    <h1>API keys and assistants</h1>
    <p class="muted">Two ways for your tools to reach your sites. Your website, reporting tools and scripts use an <a href="#rest">API key over the REST API</a> to read your sites, articles, backlinks and statistics, and edit articles. An AI assistant such as Claude or ChatGPT <a href="#mcp">connects over MCP</a>: you sign in and allow it, no key needed.</p>
  </div>
</div>
${extra.message ?? ''}
${extra.created ?? ''}
<div class="two-col">
  <section class="card" aria-labelledby="create-h">
    <h2 id="create-h">Create an API key</h2>
    <form method="post" action="/app/connect/keys" class="stack">
      ${csrfField(ui.session.csrfToken)}
      <label for="key-name">Name</label>
      <input id="key-name" name="name" type="text" maxlength="${maxNameLength}" required placeholder="e.g. Website reporting" value="${extra.name ?? ''}">
      <label class="check"><input type="checkbox" name="read_only" value="1"${extra.readOnly ? html` checked` : ''}> Read-only <span class="muted small">(can read, cannot change articles)</span></label>
      ${ui.user.staff ? html`<p class="notice notice-warning small">You are staff: your keys are admin keys that can read every account.</p>` : ''}
      <div class="form-actions"><button type="submit" class="primary">Create key</button></div>
    </form>
  </section>
  ${restHowTo(settings.publicUrl)}
</div>
${mcpHowTo(settings.mcpPublicUrl)}
<section class="card" aria-labelledby="keys-h">
  <h2 id="keys-h">Your API keys <span class="count">${active} active</span></h2>
  <p class="muted small">An account may hold ${services.keys.maxActive} active keys; revoke keys you no longer use.</p>
  ${tableWrap(
    'API keys',
    html`<tr><th scope="col">Name</th><th scope="col">Starts with</th><th scope="col">Access</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>`,
    keyRows(ui, keys),
    'No keys yet. Create one above.',
  )}
</section>`,
    };
  }

  app.get<{ Querystring: { revoked?: string; created?: string } }>('/app/connect', async (request, reply) => {
    const ui = uiOf(request);
    const revoked = textField(request.query.revoked);
    const createdId = textField(request.query.created);
    if (createdId !== '') {
      // The key travels in the session's flash, never in the URL: this page shows it once.
      const fresh = newKeyOf(await services.sessions.takeFlash(ui.session.id));
      if (fresh && String(fresh.id) === createdId) {
        return sendPage(reply, ui, await render(ui, { created: newKeyPanel(fresh, settings.publicUrl) }));
      }
      const message = notice('info', 'The key was created and shown once, when you created it; Anchorage cannot show it again. If you did not copy it, revoke it and create another.');
      return sendPage(reply, ui, await render(ui, { message }));
    }
    const message =
      revoked === '1'
        ? notice('success', 'The key was revoked. Requests with it are refused from now on.')
        : revoked === '0'
          ? notice('info', 'That key was already revoked.')
          : undefined;
    return sendPage(reply, ui, await render(ui, { message }));
  });

  app.post<{ Body: KeyForm }>('/app/connect/keys', async (request, reply) => {
    const ui = uiOf(request);
    const name = textField(request.body?.name).trim();
    const readOnly = textField(request.body?.read_only) !== '';
    // A key's name shows in lists, the activity log and its CSV: no control characters.
    if (name === '' || [...name].length > maxNameLength || /[\u0000-\u001f\u007f]/.test(name)) {
      const message = notice('error', `Give the key a name of 1 to ${maxNameLength} characters, without control characters.`);
      return sendPage(reply, ui, await render(ui, { message, name, readOnly }), 422);
    }
    let created: CreatedKey;
    try {
      created = await services.keys.create(ui.user.userId, { name, readOnly });
    } catch (error) {
      if (!(error instanceof TooManyKeysError)) throw error;
      return sendPage(reply, ui, await render(ui, { message: notice('error', error.message), name, readOnly }), 422);
    }
    // POST-redirect-GET: a reload shows the key's page, it never creates a second key. The key is
    // shown by the next page only (never in a URL or a log), from the session's sealed flash.
    const flash: NewKeyFlash = { kind: 'api_key', id: created.id, key: created.key, name, readOnly };
    await services.sessions.setFlash(ui.session.id, JSON.stringify(flash));
    return reply.redirect(`/app/connect?created=${created.id}`, 303);
  });

  app.post<{ Params: { id: string } }>('/app/connect/keys/:id/revoke', async (request, reply) => {
    const ui = uiOf(request);
    const id = idParam(request.params.id, 'key');
    const revoked = await services.keys.revoke(id, ui.user.accountId);
    // Another account's key and an unknown id are not found; only this account's own keys answer.
    if (!revoked && !(await services.keys.list(ui.user.accountId)).some((key) => key.id === id)) {
      throw new AppError('not_found', 'No key with this id.');
    }
    return reply.redirect(`/app/connect?revoked=${revoked ? 1 : 0}`, 303);
  });
}
