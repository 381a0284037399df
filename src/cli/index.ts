import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { loadSettings } from '../config.js';
import { AppError } from '../core/errors.js';
import { connect } from '../db/connect.js';
import { migrate } from '../db/migrate.js';
import { helperThreadNice, niceThisThread } from '../platform/threads.js';
import { serve } from '../main.js';
import { openRuntime, type Runtime } from '../runtime.js';
import { ImportError, type ImportProgress, importPlanJson, importResultJson } from '../services/import.js';
import { ExportError } from '../services/export.js';
import { SiteMoveError } from '../services/sites.js';
import { UserExistsError } from '../services/users.js';
import { backup, usePgDump } from './backup.js';
import { ImportProgressBar } from './import-progress.js';
import { cliLockWaitMs, cliPageCacheKib } from './connection.js';

const usage = `Usage: anchorage <command>
  serve                                                    run the service
  migrate                                                  apply database migrations
  user create --email E --password P [--account NAME] [--staff]
  key create --email E [--name N] [--read-only]            prints the key id, then the key on the last line
  key revoke ID
  import [--dry-run] FILE|-                                 create or update sites, articles and backlinks, all or nothing;
                                                           --dry-run lists every problem and the plan, writes nothing
  export --account ACCOUNT_ID|EMAIL                        an account's sites, articles and backlinks in the import format
  site move ID --account ACCOUNT_ID|EMAIL                  move a site and all it owns to another account
  account delete ACCOUNT_ID|EMAIL --confirm NAME           delete an account and all it owns (NAME: its exact name);
                                                           its activity records are kept without personal data
  backup FILE                                              copy the SQLite database into a new file
  demo                                                     load the demo data set
  recount                                                  rebuild the day and month counters from the rows
  housekeeping                                             delete expired sessions, tokens, idempotency and old activity records,
                                                           and staff's import uploads a day old`;

class UsageError extends Error {}

const print = (line: string) => process.stdout.write(`${line}\n`);

/** Writes `pieces` to stdout as the pipe drains, then a newline. */
async function printPieces(pieces: Iterable<string>): Promise<void> {
  for (const piece of pieces) if (!process.stdout.write(piece)) await once(process.stdout, 'drain');
  print('');
}

/** The import file (or stdin) as it is read, counted on the progress bar when there is one. */
async function* importInput(path: string, progress: ImportProgressBar | undefined): AsyncGenerator<Buffer> {
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    progress?.read(chunk.length);
    yield chunk;
  }
}

/** The file to import; stdin (`-`) is copied to a temporary file first, as an import reads its file twice. */
async function importFile(name: string): Promise<{ path: string; remove: () => void }> {
  if (name !== '-') return { path: name, remove: () => undefined };
  const dir = mkdtempSync(join(tmpdir(), 'anchorage-stdin-'));
  const path = join(dir, 'import.json');
  const remove = () => rmSync(dir, { recursive: true, force: true });
  await pipeline(process.stdin, createWriteStream(path)).catch((error: unknown) => {
    remove();
    throw error;
  });
  return { path, remove };
}

async function withRuntime<T>(run: (runtime: Runtime) => Promise<T>): Promise<T> {
  const settings = loadSettings();
  // Log lines (a Redis outage, say) go to stderr: stdout holds only what the command prints.
  const runtime = await openRuntime(settings, {
    logger: pino({ level: settings.logLevel }, pino.destination({ dest: 2, sync: true })),
    lockWaitMs: cliLockWaitMs,
    pageCacheKib: cliPageCacheKib,
  });
  try {
    return await run(runtime);
  } finally {
    await runtime.close();
  }
}

async function main(argv: string[]): Promise<unknown> {
  const [command, sub, ...rest] = argv;
  const args = (extra: string[]) =>
    parseArgs({
      args: extra,
      allowPositionals: true,
      options: {
        email: { type: 'string' },
        password: { type: 'string' },
        account: { type: 'string' },
        staff: { type: 'boolean' },
        name: { type: 'string' },
        'read-only': { type: 'boolean' },
        confirm: { type: 'string' },
      },
    });

  if (command === 'serve') return serve(loadSettings());
  if (command === 'migrate') {
    const settings = loadSettings();
    const db = connect(settings.databaseUrl, settings.dataDir, { lockWaitMs: cliLockWaitMs });
    const applied = await migrate(db);
    await db.kysely.destroy();
    return print(applied.length > 0 ? `Applied: ${applied.join(', ')}` : 'Up to date.');
  }
  if (command === 'user' && sub === 'create') {
    const { values } = args(rest);
    if (!values.email || !values.password) throw new UsageError('user create needs --email and --password');
    const created = await withRuntime(({ services }) =>
      services.users.create({ email: values.email!, password: values.password!, account: values.account, staff: values.staff }),
    );
    return print(JSON.stringify(created));
  }
  if (command === 'key' && sub === 'create') {
    const { values } = args(rest);
    if (!values.email) throw new UsageError('key create needs --email');
    const created = await withRuntime(async ({ services }) => {
      const user = await services.users.byEmail(values.email!);
      if (!user) throw new UsageError(`no user with e-mail ${values.email}`);
      return services.keys.create(user.id, { name: values.name, readOnly: values['read-only'] });
    });
    print(`id: ${created.id}`);
    return print(created.key);
  }
  if (command === 'key' && sub === 'revoke') {
    const id = Number(rest[0]);
    if (!Number.isInteger(id) || id < 1) throw new UsageError('key revoke needs a key id');
    const revoked = await withRuntime(({ services }) => services.keys.revoke(id));
    if (!revoked) throw new UsageError(`no active key with id ${id}`);
    return print(`Key ${id} revoked.`);
  }
  if (command === 'site' && sub === 'move') {
    const { values, positionals } = args(rest);
    const id = Number(positionals[0]);
    if (positionals.length !== 1 || !Number.isInteger(id) || id < 1 || !values.account) {
      throw new UsageError('site move needs a site id and --account (an account id or a user e-mail)');
    }
    const moved = await withRuntime(({ services }) => services.sites.move(id, values.account!));
    return print(JSON.stringify(moved));
  }
  if (command === 'account' && sub === 'delete') {
    const { values, positionals } = args(rest);
    if (positionals.length !== 1 || values.confirm === undefined) {
      throw new UsageError("account delete needs an account (its id or a user's e-mail) and --confirm with the account's exact name");
    }
    const deleted = await withRuntime(async ({ services }) => services.accountDeletion.deleteAccount(await services.exporter.accountOf(positionals[0]!), values.confirm!)).catch(
      (error: unknown) => {
        if (!(error instanceof AppError)) throw error;
        throw new UsageError(`${Object.values(error.details.fields ?? {}).flat()[0] ?? error.message} Nothing was deleted.`);
      },
    );
    return print(JSON.stringify(deleted));
  }
  if (command === 'import' && sub !== undefined) {
    const { values, positionals } = parseArgs({ args: [sub, ...rest], allowPositionals: true, options: { 'dry-run': { type: 'boolean' } } });
    if (positionals.length !== 1) throw new UsageError('import needs one FILE (or - for stdin), and takes --dry-run');
    // Beside a serving node, the node's event loop gets a core first, as from the UI import's child.
    niceThisThread(helperThreadNice);
    const input = await importFile(positionals[0]!);
    try {
      const progress = ImportProgressBar.forInput(input.path);
      const open = () => importInput(input.path, progress);
      const onProgress = (rows: ImportProgress) => progress?.wrote(rows);
      if (values['dry-run']) {
        const plan = await withRuntime(({ services }) => services.importer.dryRun(open, onProgress)).finally(() => progress?.stop());
        print(importPlanJson(plan));
        process.stderr.write(`${plan.problems.length + plan.more === 0 ? 'No problems.' : `${plan.problems.length + plan.more} problems.`} Dry run: nothing was written.\n`);
        if (plan.problems.length > 0) process.exitCode = 1;
        return undefined;
      }
      const sites = await withRuntime(({ services }) => services.importer.importFrom(open, onProgress)).finally(() => progress?.stop());
      return await printPieces(importResultJson(sites));
    } finally {
      input.remove();
    }
  }
  if (command === 'export') {
    const { values, positionals } = args([sub, ...rest].filter((arg) => arg !== undefined));
    if (positionals.length > 0 || !values.account) throw new UsageError('export needs --account (an account id or a user e-mail)');
    return withRuntime(async ({ services }) => {
      const accountId = await services.exporter.accountOf(values.account!);
      for await (const piece of services.exporter.exportAccount(accountId)) if (!process.stdout.write(piece)) await once(process.stdout, 'drain');
      print('');
    });
  }
  if (command === 'backup' && sub !== undefined) {
    const outcome = await backup(loadSettings(), sub, cliLockWaitMs);
    if (outcome === 'postgres') {
      process.stderr.write(`${usePgDump}\n`);
      process.exitCode = 2;
      return undefined;
    }
    return print(`Backup written to ${outcome.written}`);
  }
  if (command === 'housekeeping') {
    const deleted = await withRuntime(({ services }) => services.housekeeping.run());
    if (!deleted) throw new Error('Another node is running housekeeping right now; nothing was deleted. Try again later.');
    return print(JSON.stringify(deleted));
  }
  if (command === 'recount') {
    const counted = await withRuntime(({ services }) => services.counters.recount());
    return print(JSON.stringify(counted));
  }
  if (command === 'demo') {
    const demo = await withRuntime(async ({ services }) => services.demo.load());
    print(`UI sign-in: e-mail ${demo.email}  password ${demo.password}`);
    return print(demo.apiKey);
  }
  throw new UsageError(usage);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ImportError) {
    for (const problem of error.problems) process.stderr.write(`Import failed at ${problem.path}: ${problem.message}\n`);
    if (error.more > 0) process.stderr.write(`… and ${error.more} more problems.\n`);
    process.stderr.write('Nothing was imported.\n');
  }
  else if (error instanceof UsageError || error instanceof UserExistsError || error instanceof SiteMoveError || error instanceof ExportError) process.stderr.write(`${error.message}\n`);
  else process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
