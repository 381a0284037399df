import type { FastifyInstance } from 'fastify';
import { parseDay } from '../../core/time.js';
import type { ActivityFilters } from '../../services/activity.js';
import type { ApiKeySummary } from '../../services/keys.js';
import { badge, breakableAddress, notice, pager, queryString, tableWrap, timestamp } from '../components.js';
import { pageParam, textField, uiOf, type WebOptions } from '../context.js';
import { allPages, sendCsv, toCsv } from '../csv.js';
import { html, type SafeHtml } from '../html.js';
import { sendPage } from '../respond.js';

interface ActivityQuery {
  channel?: string;
  credential?: string;
  status?: string;
  from?: string;
  to?: string;
  calls?: string;
  page?: string;
}

/** The filters as the form shows them, and as the activity log takes them. */
interface ParsedFilters {
  form: { channel: string; credential: string; status: string; from: string; to: string; calls: string };
  filters: ActivityFilters;
  problems: string[];
}

export function parseActivityQuery(query: ActivityQuery): ParsedFilters {
  const form = {
    channel: textField(query.channel),
    credential: textField(query.credential),
    status: textField(query.status),
    from: textField(query.from),
    to: textField(query.to),
    calls: textField(query.calls) === 'all' ? 'all' : '',
  };
  // By default the log shows the calls that do something; the MCP handshakes are one choice away.
  const filters: ActivityFilters = form.calls === 'all' ? {} : { hideHandshakes: true };
  const problems: string[] = [];
  if (form.channel === 'api' || form.channel === 'mcp') filters.channel = form.channel;
  if (form.status === 'success' || form.status === 'error') filters.status = form.status;
  const credential = /^(key|mcp):([1-9]\d{0,9})$/.exec(form.credential);
  if (credential) {
    if (credential[1] === 'key') filters.apiKeyId = Number(credential[2]);
    else filters.mcpGrantId = Number(credential[2]);
  } else if (form.credential) {
    problems.push('Choose a credential from the list.');
  }
  for (const name of ['from', 'to'] as const) {
    if (!form[name]) continue;
    if (parseDay(form[name])) filters[name] = form[name];
    else problems.push(`“${form[name]}” is not a date (YYYY-MM-DD); the ${name === 'from' ? 'start' : 'end'} date was ignored.`);
  }
  if (filters.from && filters.to && filters.from > filters.to) problems.push('The start date is after the end date, so nothing can match.');
  return { form, filters, problems };
}

type ActivityRow = Awaited<ReturnType<WebOptions['services']['activity']['list']>>['data'][number];

/** A readable name for the credential of a record. */
function credentialName(row: ActivityRow, keys: Map<number, ApiKeySummary>, grants: Map<number, string>): string {
  if (row.api_key_id !== null) {
    const key = keys.get(row.api_key_id);
    return key ? `key “${key.name}” (${key.display_prefix}…)` : `key #${row.api_key_id}`;
  }
  if (row.mcp_grant_id !== null) {
    const name = grants.get(row.mcp_grant_id);
    return name ? `assistant “${name}” (#${row.mcp_grant_id})` : `assistant connection #${row.mcp_grant_id}`;
  }
  return row.status === 401 ? 'no valid credential' : '—';
}

/** The activity table's columns: its head, and each cell's label where a phone stacks the rows. */
const channelLabels = { api: 'API', mcp: 'MCP', cli: 'Operator' } as const;
const columns = { time: 'Time', channel: 'Channel', request: 'Request', credential: 'Credential', status: 'Status', duration: 'Duration', client: 'Client' } as const;

const what = (row: ActivityRow): string => row.tool ?? `${row.method ?? ''} ${row.path ?? ''}`.trim();

/** The activity log of everything done through the API and MCP, with filters, paging and CSV. */
export async function activityPages(app: FastifyInstance, options: WebOptions) {
  const { services } = options;

  app.get<{ Querystring: ActivityQuery }>('/app/activity', async (request, reply) => {
    const ui = uiOf(request);
    const { form, filters, problems } = parseActivityQuery(request.query);
    const page = pageParam(request.query.page);
    // Staff see their own account here too: other accounts' logs are not shown in the UI.
    const [log, keyList, seen, grants] = await Promise.all([
      services.activity.list(ui.user.accountId, filters, { page, per_page: 50 }),
      services.keys.list(ui.user.accountId),
      services.uiQueries.activityCredentials(ui.user.accountId),
      services.uiQueries.grantNames(ui.user.accountId),
    ]);
    const keys = new Map(keyList.map((key) => [key.id, key]));
    const keyIds = [...new Set([...keyList.map((key) => key.id), ...seen.apiKeyIds])].sort((a, b) => b - a);
    const option = (value: string, label: string): SafeHtml =>
      html`<option value="${value}"${form.credential === value ? html` selected` : ''}>${label}</option>`;
    const filterQuery = { channel: form.channel, credential: form.credential, status: form.status, from: form.from, to: form.to, calls: form.calls };
    const filtered = Object.keys(filters).some((name) => name !== 'hideHandshakes');
    const rows = log.data.map(
      (row) => html`<tr class="${row.status >= 400 ? 'failed' : ''}">
  <td data-label="${columns.time}">${timestamp(row.created_at, 'seconds')}</td>
  <td data-label="${columns.channel}">${badge(channelLabels[row.channel], row.channel)}</td>
  <td class="request" data-label="${columns.request}"><span class="request-op">${row.operation ?? row.tool ?? '—'}</span><code class="request-path">${breakableAddress(what(row))}</code></td>
  <td class="credential" data-label="${columns.credential}">${credentialName(row, keys, grants)}</td>
  <td data-label="${columns.status}"><span class="status ${row.status >= 400 ? 'status-error' : 'status-ok'}">${row.status}</span>${row.error ? html`<br><span class="muted small">${row.error}</span>` : ''}</td>
  <td class="num" data-label="${columns.duration}">${row.duration_ms} ms</td>
  <td class="small" data-label="${columns.client}">${row.client_ip ?? ''}</td>
</tr>`,
    );
    return sendPage(reply, ui, {
      title: 'Activity log',
      active: 'activity',
      body: html`<div class="page-head">
  <div>
    <h1>Activity log</h1>
    <p class="muted">Every request made with your API keys and every action of your connected assistants, newest first (to the second, in the order they were made). Times are UTC.</p>
  </div>
  <div class="actions"><a class="button" href="/app/activity.csv${queryString(filterQuery)}" download>Export CSV</a></div>
</div>
${problems.map((problem) => notice('warning', problem))}
<form class="filter-grid card no-print" method="get" action="/app/activity" aria-label="Filter the activity log">
  <div class="field"><label for="f-channel">Channel</label>
    <select id="f-channel" name="channel">
      ${[['', 'API and MCP'], ['api', 'API'], ['mcp', 'MCP']].map(([value, label]) => html`<option value="${value!}"${form.channel === value ? html` selected` : ''}>${label!}</option>`)}
    </select></div>
  <div class="field"><label for="f-credential">Credential</label>
    <select id="f-credential" name="credential">
      ${option('', 'Any credential')}
      ${keyIds.map((id) => option(`key:${id}`, keys.get(id) ? `Key “${keys.get(id)!.name}” (${keys.get(id)!.display_prefix}…)${keys.get(id)!.revoked_at ? ', revoked' : ''}` : `Key #${id}`))}
      ${[...new Set([...grants.keys(), ...seen.mcpGrantIds])].sort((a, b) => b - a).map((id) => option(`mcp:${id}`, grants.has(id) ? `Assistant “${grants.get(id)!}” (#${id})` : `Assistant connection #${id}`))}
    </select></div>
  <div class="field"><label for="f-status">Result</label>
    <select id="f-status" name="status">
      ${[['', 'Any result'], ['success', 'Success'], ['error', 'Error']].map(([value, label]) => html`<option value="${value!}"${form.status === value ? html` selected` : ''}>${label!}</option>`)}
    </select></div>
  <div class="field"><label for="f-calls">Calls</label>
    <select id="f-calls" name="calls">
      ${[['', 'Requests and tool calls'], ['all', 'Everything, with MCP handshakes']].map(([value, label]) => html`<option value="${value!}"${form.calls === value ? html` selected` : ''}>${label!}</option>`)}
    </select></div>
  <div class="field"><label for="f-from">From</label><input id="f-from" type="date" name="from" value="${form.from}"></div>
  <div class="field"><label for="f-to">To</label><input id="f-to" type="date" name="to" value="${form.to}"></div>
  <div class="field field-actions"><button type="submit" class="primary">Apply</button> <a href="/app/activity">Reset</a></div>
</form>
<section class="card" aria-labelledby="log-h">
  <h2 id="log-h" class="visually-hidden">Records</h2>
  <p class="muted small" data-calls-note>${
    form.calls === 'all'
      ? html`Showing everything, including the calls assistants make to connect (<code>initialize</code>, <code>tools/list</code>, notifications, <code>ping</code>). <a href="/app/activity${queryString({ ...filterQuery, calls: undefined })}">Hide them</a>`
      : html`The calls assistants make to connect (<code>initialize</code>, <code>tools/list</code>, notifications, <code>ping</code>) are hidden unless they failed. <a href="/app/activity${queryString({ ...filterQuery, calls: 'all' })}">Show them too</a>`
  }</p>
  ${tableWrap(
    'Activity records',
    html`<tr>${Object.entries(columns).map(([name, label]) => html`<th scope="col"${name === 'duration' ? html` class="num"` : ''}>${label}</th>`)}</tr>`,
    rows,
    filtered ? 'No records match these filters.' : 'No activity yet. Calls made with your API keys and assistants appear here.',
    'stacked',
  )}
  ${pager(log.meta, (p) => `/app/activity${queryString({ ...filterQuery, page: p })}`, 'Activity')}
</section>`,
    });
  });

  app.get<{ Querystring: ActivityQuery }>('/app/activity.csv', async (request, reply) => {
    const ui = uiOf(request);
    const { filters } = parseActivityQuery(request.query);
    const [rows, keyList, grants] = await Promise.all([
      allPages((page) => services.activity.list(ui.user.accountId, filters, page)),
      services.keys.list(ui.user.accountId),
      services.uiQueries.grantNames(ui.user.accountId),
    ]);
    const keys = new Map(keyList.map((key) => [key.id, key]));
    const csv = await toCsv(
      ['time', 'channel', 'operation', 'method', 'path', 'tool', 'api_key_id', 'api_key_name', 'mcp_grant_id', 'mcp_client_name', 'status', 'error', 'duration_ms', 'client_ip', 'user_agent'],
      rows.map((row) => [
        row.created_at,
        row.channel,
        row.operation,
        row.method,
        row.path,
        row.tool,
        row.api_key_id,
        row.api_key_id !== null ? keys.get(row.api_key_id)?.name : null,
        row.mcp_grant_id,
        row.mcp_grant_id !== null ? grants.get(row.mcp_grant_id) : null,
        row.status,
        row.error,
        row.duration_ms,
        row.client_ip,
        row.user_agent,
      ]),
    );
    return sendCsv(reply, `activity-${services.clock.now().toISOString().slice(0, 10)}.csv`, csv);
  });
}
