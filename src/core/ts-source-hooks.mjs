// Module hooks for running the service's threads from TypeScript sources (tests under vitest, no
// build): `.js` specifiers that name a `.ts` file resolve to it, and `.ts` files are transpiled
// by esbuild (type syntax stripped, as tsc emits it; loading TypeScript's compiler took each
// thread about a second). The built service (dist/) never loads this file.
import { readFile } from 'node:fs/promises';
import { transform } from 'esbuild';

export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (error) {
    if (!specifier.endsWith('.js') || !context.parentURL?.endsWith('.ts')) throw error;
    return nextResolve(specifier.replace(/\.js$/, '.ts'), context);
  }
}

export async function load(url, context, nextLoad) {
  if (!url.endsWith('.ts')) return nextLoad(url, context);
  const source = await readFile(new URL(url), 'utf8');
  const { code } = await transform(source, { loader: 'ts', format: 'esm', target: 'es2022', sourcefile: url });
  return { format: 'module', source: code, shortCircuit: true };
}
