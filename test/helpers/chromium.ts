import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';

/** Debian's Chromium, driven by playwright-core; `CHROMIUM_PATH` names another. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Browser tests are skipped where Chromium is missing outside CI; in CI a missing browser fails them. */
export const runInBrowser = existsSync(chromiumPath) || Boolean(process.env.CI);

/** The console error Chromium reports for a page answered with a 4xx status, as every refusal is. */
export const refusedRequest = /^Failed to load resource: the server responded with a status of 4\d\d/;

/** No sandbox (containers have none to give), no GPU, nothing fetched in the background. */
const chromiumArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * Chromium's environment: the tests' own, but for libfaketime (`scripts/test-at.sh` moves the
 * clock of the test process). Preloaded into Chromium's processes it hangs their navigations;
 * the clock under test is the service's.
 */
const chromiumEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'LD_PRELOAD' && !name.startsWith('FAKETIME'))) as Record<string, string>;

function requireChromium(): void {
  if (!existsSync(chromiumPath)) throw new Error(`Chromium not found at ${chromiumPath}: the browser tests must run in CI.`);
}

/** Chromium for a test that starts it outside hooks or opens pages of several sizes: close it when done. */
export async function launchChromium(): Promise<Browser> {
  requireChromium();
  return chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, env: chromiumEnv });
}

/** Signs in through the form at `origin`, and waits for the sites page it leads to. */
export async function signInThroughForm(page: Page, origin: string, email: string, password: string): Promise<void> {
  await page.goto(`${origin}/app/sign-in`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${origin}/app`);
}

export interface BrowserOptions {
  /** Every page's; 1280 × 900 unless set. */
  viewport?: { width: number; height: number };
  /** An origin whose pages may read and write the clipboard, asked for once the earlier hooks have run. */
  clipboardOrigin?: () => string;
  /** Which console errors count among `problems`: every one (unless set), none, or all but those matching. */
  consoleErrors?: boolean | { except: RegExp };
}

export interface UsedBrowser {
  context: BrowserContext;
  /** The context's first page. */
  page: Page;
  /** The uncaught errors and console errors (as `consoleErrors` says) of every page, in order. */
  problems: string[];
}

/**
 * Chromium with a profile of its own, started before the tests of the enclosing block (or file)
 * and closed, its profile removed, after them: read it inside a test or a later hook.
 */
export function useBrowser(options: BrowserOptions = {}): UsedBrowser {
  const browser = { problems: [] as string[] } as UsedBrowser;
  const consoleErrors = options.consoleErrors ?? true;
  let profile: string | undefined;
  beforeAll(async () => {
    requireChromium();
    profile = mkdtempSync(join(tmpdir(), 'anchorage-chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless: true,
      viewport: options.viewport ?? { width: 1280, height: 900 },
      args: chromiumArgs,
      env: chromiumEnv,
    });
    browser.context = context;
    if (options.clipboardOrigin) await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: options.clipboardOrigin() });
    context.on('weberror', (error) => browser.problems.push(error.error().message));
    context.on('console', (message) => {
      if (message.type() !== 'error' || consoleErrors === false) return;
      if (consoleErrors === true || !consoleErrors.except.test(message.text())) browser.problems.push(message.text());
    });
    browser.page = context.pages()[0] ?? (await context.newPage());
  }, 120_000);
  afterAll(async () => {
    await browser.context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });
  return browser;
}
