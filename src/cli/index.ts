import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadSettings } from '../config.js';
import { connect } from '../db/connect.js';
import { migrate } from '../db/migrate.js';
import { serve } from '../main.js';
import { openRuntime, type Runtime } from '../runtime.js';
import { ImportError } from '../services/import.js';
import { UserExistsError } from '../services/users.js';

const usage = `Usage: anchorage <command>
  serve                                                    run the service
  migrate                                                  apply database migrations
  user create --email E --password P [--account NAME] [--staff]
  key create --email E [--name N] [--read-only]            prints the key id, then the key on the last line
  key revoke ID
  import FILE|-                                            sites, articles and backlinks, all or nothing
  demo                                                     load the demo data set
  recount                                                  rebuild the day and month counters from the rows`;

class UsageError extends Error {}

const print = (line: string) => process.stdout.write(`${line}\n`);

function readInput(file: string): unknown {
  const text = readFileSync(file === '-' ? 0 : file, 'utf8');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ImportError('$', `not valid JSON (${(error as Error).message})`);
  }
}

async function withRuntime<T>(run: (runtime: Runtime) => Promise<T>): Promise<T> {
  const runtime = await openRuntime(loadSettings(), {});
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
      },
    });

  if (command === 'serve') return serve(loadSettings());
  if (command === 'migrate') {
    const settings = loadSettings();
    const db = connect(settings.databaseUrl, settings.dataDir);
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
  if (command === 'import' && sub !== undefined) {
    const input = readInput(sub);
    const result = await withRuntime(({ services }) => services.importer.run(input));
    return print(JSON.stringify(result));
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
  if (error instanceof ImportError) process.stderr.write(`Import failed at ${error.message}\nNothing was imported.\n`);
  else if (error instanceof UsageError || error instanceof UserExistsError) process.stderr.write(`${error.message}\n`);
  else process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
