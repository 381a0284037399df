import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { Database } from '../db/schema.js';
import {
  checked,
  importArticle,
  importBacklink,
  importFileSchema,
  type ImportProblem,
  importSite,
  type JsonPath,
  jsonPath,
  keyOf,
  type SiteFields,
} from './import-format.js';
import { type ImportEvent, type ImportList, importEvents, NotJsonError } from './import-reader.js';
import type { ImportScratch } from './import-scratch.js';

/** A site of the file as the check found it: the members given (valid ones only) and its owner's account. */
export interface SiteHeader {
  index: number;
  fields: Partial<SiteFields>;
  /** Undefined when the owner is missing, invalid or unknown (a problem). */
  accountId: number | undefined;
}

export interface CheckedFile {
  /** The problems found, in file order, at most the cap asked for. */
  problems: ImportProblem[];
  /** Problems found past the cap. */
  more: number;
  sites: SiteHeader[];
}

export type ImportSource = AsyncIterable<Buffer | string> | Iterable<Buffer | string>;

const siteMembers: Record<string, z.ZodType> = importSite.shape;
const rootMembers: Record<string, z.ZodType> = importFileSchema.shape;
const rowSchemas = { articles: importArticle, backlinks: importBacklink } as const;
const keyWords = {
  articles: 'an article is matched by its url',
  backlinks: 'a backlink is matched by its source_url and target_url',
} as const;

/**
 * Reads a whole import file and finds every problem in it (up to `cap`, counting the rest),
 * holding one row at a time: each member and row is checked as it arrives, each object's missing
 * and unknown members when it ends, and each row's key against the keys before it (kept in
 * `scratch`, on disk). Writes nothing.
 */
export async function checkImportFile(source: ImportSource, db: Kysely<Database>, scratch: ImportScratch, cap: number): Promise<CheckedFile> {
  const file = new FileCheck(db, scratch, cap);
  try {
    for await (const events of importEvents(source)) {
      for (const event of events) await file.take(event);
    }
  } catch (error) {
    if (!(error instanceof NotJsonError)) throw error;
    file.problem([], `Not valid JSON (${error.message}).`);
  }
  return { problems: file.problems, more: file.more, sites: file.sites };
}

class FileCheck {
  readonly problems: ImportProblem[] = [];
  more = 0;
  readonly sites: SiteHeader[] = [];
  private readonly root = new Set<string>();
  private site: { header: SiteHeader; given: Set<string> } | undefined;
  private readonly owners = new Map<string, number | null>();
  /** The first site of each key (account and website_url); a file names few sites. */
  private readonly siteKeys = new Map<string, number>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly scratch: ImportScratch,
    private readonly cap: number,
  ) {}

  problem(at: JsonPath, message: string): void {
    this.add([{ path: jsonPath(at), message }]);
  }

  private add(problems: ImportProblem[]): void {
    for (const problem of problems) {
      if (this.problems.length < this.cap) this.problems.push(problem);
      else this.more += 1;
    }
  }

  /** Problems of `value` as `schema` sees it at `at`; its value when there are none. */
  private check<T extends z.ZodType>(schema: T, value: unknown, at: JsonPath): { value: z.output<T> } | undefined {
    const result = checked(schema, value, at);
    if ('value' in result) return result;
    this.add(result.problems);
    return undefined;
  }

  async take(event: ImportEvent): Promise<void> {
    switch (event.kind) {
      case 'value':
        this.check(event.path.length === 0 ? importFileSchema : importSite, event.value, event.path);
        return;
      case 'field':
        if (event.site === null) this.member(this.root, rootMembers, [], event.key, event.value);
        else this.siteMember(event.key, event.value);
        return;
      case 'siteStart':
        this.site = { header: { index: event.site, fields: {}, accountId: undefined }, given: new Set() };
        return;
      case 'item':
        this.item(event.list, event.index, event.value);
        return;
      case 'siteEnd':
        return this.endSite();
      case 'end':
        this.missing(this.root, rootMembers, []);
    }
  }

  /** Checks one member of an object; true when it is a known member given once, and valid. */
  private member(given: Set<string>, members: Record<string, z.ZodType>, at: JsonPath, key: string, value: unknown): { value: unknown } | undefined {
    if (given.has(key)) {
      this.problem([...at, key], 'Given more than once.');
      return undefined;
    }
    given.add(key);
    if (!Object.hasOwn(members, key)) return undefined;
    return this.check(members[key]!, value, [...at, key]);
  }

  /** The object's unknown members, and the required members it did not give. */
  private missing(given: Set<string>, members: Record<string, z.ZodType>, at: JsonPath): void {
    const unknown = [...given].filter((key) => !Object.hasOwn(members, key));
    if (unknown.length > 0) this.problem(at, `Not accepted here: ${unknown.join(', ')}.`);
    for (const [key, schema] of Object.entries(members)) if (!given.has(key)) this.check(schema, undefined, [...at, key]);
  }

  private siteMember(key: string, value: unknown): void {
    const { header, given } = this.site!;
    const valid = this.member(given, siteMembers, ['sites', header.index], key, value);
    if (valid && key !== 'articles' && key !== 'backlinks') Object.assign(header.fields, { [key]: valid.value });
  }

  private item(list: ImportList, index: number, value: unknown): void {
    const site = this.site!.header.index;
    const at = ['sites', site, list, index];
    this.check(rowSchemas[list], value, at);
    const key = keyOf(list, value);
    if (key === undefined) return;
    const earlier = this.scratch.earlierWithKey(site, list, key, index);
    if (earlier !== undefined) this.problem(at, `Same key as ${jsonPath(['sites', site, list, earlier])}: ${keyWords[list]}, so give each once.`);
  }

  private async endSite(): Promise<void> {
    const { header, given } = this.site!;
    this.site = undefined;
    this.sites.push(header);
    const at = ['sites', header.index];
    this.missing(given, siteMembers, at);
    const { owner, website_url: websiteUrl } = header.fields;
    if (owner === undefined) return;
    header.accountId = await this.accountOf(owner, [...at, 'owner']);
    if (header.accountId === undefined || websiteUrl === undefined) return;
    const key = JSON.stringify([header.accountId, websiteUrl]);
    const earlier = this.siteKeys.get(key);
    if (earlier === undefined) this.siteKeys.set(key, header.index);
    else this.problem([...at, 'website_url'], `Same owner's account and website_url as ${jsonPath(['sites', earlier])}: a site is matched by them, so give each once.`);
  }

  private async accountOf(owner: string, at: JsonPath): Promise<number | undefined> {
    const email = owner.toLowerCase();
    if (!this.owners.has(email)) {
      const user = await this.db.selectFrom('users').select('account_id').where('email', '=', email).executeTakeFirst();
      this.owners.set(email, user?.account_id ?? null);
    }
    const accountId = this.owners.get(email);
    if (accountId === null) this.problem(at, `No user with e-mail ${owner}; create it first (anchorage user create).`);
    return accountId ?? undefined;
  }
}
