import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoDataSet } from '../../src/demo/data.js';
import { dialectName, useHarness } from '../helpers/harness.js';

/**
 * The README's curl examples, run as written (by bash and curl) against a service holding the
 * demo data that `npm start` loads. Each example is a `curl` command in a ```bash block; it must
 * answer 2xx, unless a ```json block right after it documents an error, which it must then answer.
 */
const run = promisify(execFile);
const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');

interface Example {
  command: string;
  /** The documented error code, when the example shows a refusal. */
  error?: string;
}

/** The curl commands of the README's bash blocks, in order, with the error each documents. */
function readmeExamples(markdown: string): Example[] {
  const blocks = [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```\n?/gm)].map((m) => ({
    lang: m[1]!,
    text: m[2]!,
    start: m.index,
    end: m.index + m[0].length,
  }));
  const examples: Example[] = [];
  blocks.forEach((block, i) => {
    if (block.lang !== 'bash') return;
    const next = blocks[i + 1];
    const documented =
      next && next.lang === 'json' && markdown.slice(block.end, next.start).trim() === ''
        ? (JSON.parse(next.text) as { error?: string }).error
        : undefined;
    // A command starts at a line beginning with `curl`; the lines after it (continued with a backslash
    // or inside its quotes) belong to it.
    const commands: string[] = [];
    for (const line of block.text.split('\n')) {
      if (line.startsWith('curl ')) commands.push(line);
      else if (line.trim() !== '' && !line.trim().startsWith('#')) {
        if (commands.length === 0) throw new Error(`A bash block of the README starts with a line that is not a curl command: ${line}`);
        commands[commands.length - 1] += `\n${line}`;
      }
    }
    for (const command of commands) examples.push({ command, error: documented });
  });
  return examples;
}

const examples = readmeExamples(readme);

/** How bash and curl received one example. */
interface Outcome {
  status: number;
  body: string;
  argv: string[];
}

const harness = useHarness({ listen: true });
let apiKey: string;
let work: string;

beforeAll(async () => {
  ({ apiKey } = await harness.services.demo.load());
  work = mkdtempSync(join(tmpdir(), 'anchorage-readme-'));
}, 120_000);
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/**
 * Runs one example in bash exactly as written; `curl` is wrapped to send localhost:3000 to the
 * test's listener and to report the status, the body and the arguments it was given.
 */
async function runExample(example: Example, index: number): Promise<Outcome> {
  const port = new URL(harness.settings.publicUrl).port;
  const out = join(work, `answer-${index}`);
  const args = join(work, `argv-${index}`);
  const wrapper = `curl() {
  printf '%s\\0' "$@" > "${args}"
  command curl --silent --show-error --connect-to localhost:3000:127.0.0.1:${port} --output "${out}" --write-out '%{http_code}' "$@"
}`;
  const { stdout } = await run('bash', ['-c', `set -e\n${wrapper}\n${example.command}`], {
    env: { PATH: process.env.PATH, ANCHORAGE_KEY: apiKey },
  });
  return {
    status: Number(stdout),
    body: readFileSync(out, 'utf8'),
    argv: readFileSync(args, 'utf8').split('\0').slice(0, -1),
  };
}

/** The article id and the `find`s of a PATCH example, read from the arguments curl received. */
function patchOf(argv: string[]): { articleId: number; finds: string[] } | undefined {
  if (argv[argv.indexOf('-X') + 1] !== 'PATCH') return undefined;
  const url = argv.find((a) => a.startsWith('http://'))!;
  const articleId = Number(/\/api\/v1\/articles\/(\d+)/.exec(url)![1]);
  const body = JSON.parse(argv[argv.indexOf('-d') + 1]!) as { replacements?: { find: string }[] };
  return { articleId, finds: (body.replacements ?? []).map((r) => r.find) };
}

const outcomes: Outcome[] = [];

describe(`the README's examples against the demo data (${dialectName})`, () => {
  it('holds enough curl examples, each addressed as a reader runs it', () => {
    expect(examples.length).toBeGreaterThanOrEqual(8);
    expect(examples.filter((e) => e.error).length).toBeGreaterThanOrEqual(1);
    for (const { command } of examples) {
      expect(command).toContain('http://localhost:3000/');
      expect(command).toContain('$ANCHORAGE_KEY');
    }
  });

  it('runs every example as written, each answering 2xx or the documented error', async () => {
    for (const [index, example] of examples.entries()) {
      const outcome = await runExample(example, index);
      outcomes.push(outcome);
      if (example.error) {
        expect(outcome.status, example.command).toBeGreaterThanOrEqual(400);
        expect(outcome.status, example.command).toBeLessThan(500);
        expect((JSON.parse(outcome.body) as { error: string }).error, example.command).toBe(example.error);
      } else {
        expect(outcome.status, `${example.command}\n${outcome.body}`).toBeGreaterThanOrEqual(200);
        expect(outcome.status, `${example.command}\n${outcome.body}`).toBeLessThan(300);
      }
    }
  }, 120_000);

  it("edits articles of the demo key's own account, with text those articles hold on any day", () => {
    const patches = outcomes.map((o) => patchOf(o.argv)).filter((p) => p !== undefined);
    expect(patches.length).toBeGreaterThanOrEqual(2);
    const articlesOn = (now: Date) => {
      const { users, file } = demoDataSet(now, harness.settings.publicUrl);
      const articles = file.sites.flatMap((s) => s.articles.map((article) => ({ owner: s.owner, article })));
      return { demoUser: users[0]!.email, articles };
    };
    // Ids follow the import file's order: the article the test's service numbered so is the same one.
    const today = articlesOn(harness.clock.now());
    for (const { articleId } of patches) {
      const served = outcomes.find((o) => o.argv.some((a) => a.endsWith(`/api/v1/articles/${articleId}`)) && !patchOf(o.argv));
      expect(served, `a GET of article ${articleId} among the examples`).toBeDefined();
      const read = JSON.parse(served!.body.slice(served!.body.indexOf('{'))) as { data: { url: string } };
      expect(read.data.url).toBe(today.articles[articleId - 1]!.article.url);
    }
    // The data set is dated from the day `npm start` runs: the examples must hold whatever that day is.
    for (let day = Date.UTC(2026, 0, 1); day < Date.UTC(2029, 0, 1); day += 11 * 86_400_000 + 5 * 3_600_000) {
      const on = new Date(day).toISOString();
      const { demoUser, articles } = articlesOn(new Date(day));
      for (const { articleId, finds } of patches) {
        const { owner, article } = articles[articleId - 1]!;
        expect(owner, `article ${articleId} on ${on}`).toBe(demoUser);
        for (const find of finds) expect(article.body.split(find).length - 1, `"${find}" in article ${articleId} on ${on}`).toBe(1);
      }
    }
  }, 120_000);
});
