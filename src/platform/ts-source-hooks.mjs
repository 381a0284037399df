// Module hooks for running the service's threads from TypeScript sources (tests under vitest, no
// build): `.js` specifiers that name a `.ts` file resolve to it, and `.ts` files are transpiled
// with the project's TypeScript. The built service (dist/) never loads this file.
import { readFile } from 'node:fs/promises';
import ts from 'typescript';

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
  const { outputText } = ts.transpileModule(source, {
    fileName: url,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
  });
  return { format: 'module', source: outputText, shortCircuit: true };
}
