import { buildEditor } from '../../src/web/editor/build.js';

/** The UI serves the rich-text editor's bundle: build it once before the tests (it is not committed). */
export default async function setup(): Promise<void> {
  await buildEditor();
}
