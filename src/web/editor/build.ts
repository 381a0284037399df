import { rename, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/**
 * Bundles the rich-text editor (Tiptap and ProseMirror) into one script under src/web/assets,
 * served by us like every asset (no CDN; the CSP allows our own scripts only). `npm run build`
 * and the test set-up run it; the bundle is generated, not committed.
 */
const root = new URL('../../../', import.meta.url);
export const editorBundle = fileURLToPath(new URL('src/web/assets/rich-editor.js', root));

export async function buildEditor(): Promise<void> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('src/web/editor/index.ts', root))],
    bundle: true,
    minify: true,
    format: 'iife',
    target: ['chrome109', 'firefox115', 'safari15.6'],
    legalComments: 'none',
    write: false,
    logLevel: 'warning',
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error('esbuild produced no editor bundle');
  // Written aside, then renamed: a server reading the asset meanwhile gets the old or the new file.
  const temporary = `${editorBundle}.${process.pid}.tmp`;
  await writeFile(temporary, output.contents);
  await rename(temporary, editorBundle);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildEditor();
