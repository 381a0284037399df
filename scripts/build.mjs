// `npm run build` compiles src/ to dist/ and bundles the editor. With --if-stale (npm install's
// `prepare` and `npm start`) it does so only when a source is newer than the last build, and
// without the build tools (`npm ci --omit=dev`) it keeps the build that is there.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const stamp = join(root, 'dist/.built');
const inputs = ['src', 'tsconfig.json', 'package-lock.json'];
// The editor's bundle is the build's own output (src/web/assets, served from there).
const outputs = new Set([join(root, 'src/web/assets/rich-editor.js')]);

function newestChange(path) {
  if (outputs.has(path)) return 0;
  const stats = statSync(path);
  if (!stats.isDirectory()) return stats.mtimeMs;
  return readdirSync(path).reduce((newest, name) => Math.max(newest, newestChange(join(path, name))), stats.mtimeMs);
}

function hasBuildTools() {
  try {
    createRequire(join(root, 'package.json')).resolve('typescript');
    return true;
  } catch {
    return false;
  }
}

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const ifStale = process.argv.includes('--if-stale');
const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
const stale = built === 0 || inputs.some((input) => existsSync(join(root, input)) && newestChange(join(root, input)) > built);

if (ifStale && !stale) process.exit(0);
if (!hasBuildTools()) {
  if (ifStale && built > 0) {
    console.warn('anchorage: sources changed since the last build, but the build tools are not installed (npm ci --omit=dev); running the existing build');
    process.exit(0);
  }
  console.error('anchorage: there is no build in dist/ and no TypeScript to make one: run `npm install` (with dev dependencies) once, then `npm ci --omit=dev` keeps that build');
  process.exit(1);
}
run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json']);
run(process.execPath, [join(root, 'dist/web/editor/build.js')]);
writeFileSync(stamp, `${new Date().toISOString()}\n`);
