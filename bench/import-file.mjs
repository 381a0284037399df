// Writes an import file of bench size: one site with N backlinks (about 250 bytes each: the 1M-backlink file is 248 MB) and a few
// articles, streamed to disk so the generator itself stays small.
//
//   node bench/import-file.mjs FILE [--backlinks 1000000] [--articles 100] [--owner bench@anchorage.test]
//
// Measure an import of it (SQLite; peak memory is "Maximum resident set size"):
//   export DATA_DIR=$(mktemp -d) LOG_LEVEL=silent NODE_ENV=production
//   node bin/anchorage migrate
//   node bin/anchorage user create --email bench@anchorage.test --password 'bench password 1'
//   /usr/bin/time -v node bin/anchorage import FILE > /dev/null
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    backlinks: { type: 'string', default: '1000000' },
    articles: { type: 'string', default: '100' },
    owner: { type: 'string', default: 'bench@anchorage.test' },
  },
});
if (positionals.length !== 1) {
  process.stderr.write('Usage: node bench/import-file.mjs FILE [--backlinks N] [--articles N] [--owner EMAIL]\n');
  process.exit(1);
}
const [backlinks, articles] = [Number(values.backlinks), Number(values.articles)];

const out = createWriteStream(positionals[0]);
const write = async (text) => {
  if (!out.write(text)) await once(out, 'drain');
};

const pad = (n) => String(n).padStart(2, '0');
const day = (i) => `2026-${pad(1 + (i % 12))}-${pad(1 + (i % 28))}T${pad(i % 24)}:00:00Z`;
const anchorTypes = ['exact', 'partial', 'branded', 'url', 'generic'];
const statuses = ['pending', 'live', 'lost'];

const article = (i) =>
  JSON.stringify({
    title: `Bench article ${i}`,
    url: `https://bench.example/blog/article-${i}`,
    status: i % 4 === 0 ? 'draft' : 'published',
    published_at: day(i),
    target_keyword: `keyword ${i}`,
    meta_description: `Article ${i} of the import bench.`,
    featured_image_url: null,
    body: `<p>Article ${i}: ${'words of the bench article '.repeat(40)}<a href="https://partner.example/${i}" data-service-protected="backlink">partner</a></p>`,
  });

const backlink = (i) =>
  JSON.stringify({
    acquired_at: day(i),
    source_domain: `source-${i % 5000}.example`,
    source_url: `https://source-${i % 5000}.example/post-${i}`,
    target_url: `https://bench.example/page-${i % 300}`,
    anchor_text: `anchor ${i}`,
    anchor_type: anchorTypes[i % anchorTypes.length],
    status: statuses[i % statuses.length],
    category: i % 3 === 0 ? 'local' : 'industry',
  });

const site = {
  owner: values.owner,
  name: 'Import bench',
  website_url: 'https://bench.example',
  language: 'en',
  country: 'US',
  geographic_scope: 'national',
  industry: 'Benchmarks',
};

await write(`{"sites":[${JSON.stringify(site).slice(0, -1)},"articles":[`);
for (let i = 0; i < articles; i++) await write(`${i ? ',' : ''}${article(i)}`);
await write('],"backlinks":[');
for (let i = 0; i < backlinks; i += 1000) {
  const piece = [];
  for (let j = i; j < Math.min(i + 1000, backlinks); j++) piece.push(backlink(j));
  await write(`${i ? ',' : ''}${piece.join(',')}`);
}
await write(']}]}\n');
out.end();
await once(out, 'finish');
process.stdout.write(`${positionals[0]}: ${articles} articles, ${backlinks} backlinks, ${out.bytesWritten} bytes\n`);
