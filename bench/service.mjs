// What the benches share: the service's build, a fresh database, and starting a process of the
// bench (the service as `npm start` runs it, or the bare floor).
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** The built service (`ANCHORAGE_DIST` names another build, to compare two). */
export const dist = process.env.ANCHORAGE_DIST ?? new URL('../dist', import.meta.url).pathname;

/**
 * A fresh database: a new SQLite data directory, or, with DATABASE_URL, the schema `schema` made
 * afresh on that PostgreSQL database. `env` runs the service on it, request logging off (we
 * measure the service, not the log pipe), without demo data; `remove()` deletes both.
 */
export async function freshDatabase(schema) {
  const dataDir = mkdtempSync(join(tmpdir(), `anchorage-${schema}-`));
  let databaseUrl;
  if (process.env.DATABASE_URL) {
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`drop schema if exists ${schema} cascade`);
    await admin.query(`create schema ${schema}`);
    await admin.end();
    const base = process.env.DATABASE_URL;
    databaseUrl = `${base}${base.includes('?') ? '&' : '?'}options=-c%20search_path%3D${schema}`;
  }
  const env = { ...process.env, DATA_DIR: dataDir, DEMO_DATA: 'off', LOG_LEVEL: 'warn', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) };
  const remove = async () => {
    rmSync(dataDir, { recursive: true, force: true });
    if (!databaseUrl) return;
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`drop schema if exists ${schema} cascade`);
    await admin.end();
  };
  return { dataDir, databaseUrl, env, remove };
}

/**
 * `script` (next to this file) in a process of its own, which sends `{ port }` once it listens
 * and answers messages over IPC: `ready` is its port, `ask(message, field)` the first answer
 * holding `field`, `stopped()` sends `stop` and waits for it to exit.
 */
export function start(script, env, execArgv = []) {
  const child = fork(new URL(script, import.meta.url).pathname, [], { env, execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  const ask = (message, field) =>
    new Promise((resolve) => {
      const listen = (m) => {
        if (m[field] !== undefined) {
          child.off('message', listen);
          resolve(m);
        }
      };
      child.on('message', listen);
      child.send(message);
    });
  const stopped = () => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', resolve), child.send('stop'))));
  return { child, ready, ask, stopped };
}
