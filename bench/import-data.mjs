// The rows of a bench import file (one site, some articles, any number of backlinks of about 250
// bytes each: the 1M-backlink file is 248 MB), and writing such a file, streamed to disk
// so the writer itself stays small. bench/import-file.mjs writes one from the command line;
// bench/imports.mjs writes its own and inserts the same rows bare.
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';

const pad = (n) => String(n).padStart(2, '0');
const day = (i) => `2026-${pad(1 + (i % 12))}-${pad(1 + (i % 28))}T${pad(i % 24)}:00:00Z`;
const anchorTypes = ['exact', 'partial', 'branded', 'url', 'generic'];
const statuses = ['pending', 'live', 'lost'];

/** The site's own members, as the file gives them. */
export const benchSite = (owner) => ({
  owner,
  name: 'Import bench',
  website_url: 'https://bench.example',
  language: 'en',
  country: 'US',
  geographic_scope: 'national',
  industry: 'Benchmarks',
});

/** Article `i` of the file (every one dated). */
export const benchArticle = (i) => ({
  title: `Bench article ${i}`,
  url: `https://bench.example/blog/article-${i}`,
  status: i % 4 === 0 ? 'draft' : 'published',
  published_at: day(i),
  target_keyword: `keyword ${i}`,
  meta_description: `Article ${i} of the import bench.`,
  featured_image_url: null,
  body: `<p>Article ${i}: ${'words of the bench article '.repeat(40)}<a href="https://partner.example/${i}" data-service-protected="backlink">partner</a></p>`,
});

/** Backlink `i` of the site (every one dated): its source URL is its own, so files of other numbers add backlinks. */
export const benchBacklink = (i) => ({
  acquired_at: day(i),
  source_domain: `source-${i % 5000}.example`,
  source_url: `https://source-${i % 5000}.example/post-${i}`,
  target_url: `https://bench.example/page-${i % 300}`,
  anchor_text: `anchor ${i}`,
  anchor_type: anchorTypes[i % anchorTypes.length],
  status: statuses[i % statuses.length],
  category: i % 3 === 0 ? 'local' : 'industry',
});

/** Writes an import file of the bench site: articles 0 … `articles`-1, backlinks `first` … `first`+`backlinks`-1. Its size in bytes. */
export async function writeImportFile(path, { backlinks, articles, owner, first = 0 }) {
  const out = createWriteStream(path);
  const write = async (text) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  await write(`{"sites":[${JSON.stringify(benchSite(owner)).slice(0, -1)},"articles":[`);
  for (let i = 0; i < articles; i++) await write(`${i ? ',' : ''}${JSON.stringify(benchArticle(i))}`);
  await write('],"backlinks":[');
  for (let i = 0; i < backlinks; i += 1000) {
    const piece = [];
    for (let j = i; j < Math.min(i + 1000, backlinks); j++) piece.push(JSON.stringify(benchBacklink(first + j)));
    await write(`${i ? ',' : ''}${piece.join(',')}`);
  }
  await write(']}]}\n');
  out.end();
  await once(out, 'finish');
  return out.bytesWritten;
}
