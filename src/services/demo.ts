import type { Kysely } from 'kysely';
import type { Clock } from '../core/time.js';
import type { Database } from '../db/schema.js';
import type { ImportService } from './import.js';
import type { KeysService } from './keys.js';
import type { UsersService } from './users.js';

export interface DemoCredentials {
  email: string;
  password: string;
  apiKey: string;
}

/** Loads the demo data set: its users, their sites, articles and backlinks, and one API key. */
export class DemoService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly users: UsersService,
    private readonly keys: KeysService,
    private readonly importer: ImportService,
    private readonly publicUrl: string,
  ) {}

  async isDatabaseEmpty(): Promise<boolean> {
    const row = await this.db.selectFrom('users').select('id').limit(1).executeTakeFirst();
    return row === undefined;
  }

  /** Loads the demo data set, whose module (and its 170 KB of source in the heap) is read only here. */
  async load(): Promise<DemoCredentials> {
    const { demoDataSet } = await import('../demo/data.js');
    const { users, file } = demoDataSet(this.clock.now(), this.publicUrl);
    const ids = new Map<string, number>();
    for (const user of users) {
      const created = await this.users.create({ ...user });
      ids.set(user.email, created.user_id);
    }
    await this.importer.run(file);
    const main = users[0]!;
    const key = await this.keys.create(ids.get(main.email)!, { name: 'Demo key' });
    return { email: main.email, password: main.password, apiKey: key.key };
  }
}
