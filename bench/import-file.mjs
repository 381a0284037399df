// Writes an import file of bench size: one site with N backlinks (about 250 bytes each: the 1M-backlink file is 248 MB) and a few
// articles (bench/import-data.mjs). `--first` numbers the backlinks from there: a file of other backlinks for the same site.
//
//   node bench/import-file.mjs FILE [--backlinks 1000000] [--articles 100] [--first 0] [--owner bench@anchorage.test]
//
// Measure an import of it (SQLite): bench/imports.mjs does, with its peak memory; by hand:
//   export DATA_DIR=$(mktemp -d) LOG_LEVEL=silent NODE_ENV=production
//   node bin/anchorage migrate
//   node bin/anchorage user create --email bench@anchorage.test --password 'bench password 1'
//   time node bin/anchorage import FILE > /dev/null
import { parseArgs } from 'node:util';
import { writeImportFile } from './import-data.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    backlinks: { type: 'string', default: '1000000' },
    articles: { type: 'string', default: '100' },
    first: { type: 'string', default: '0' },
    owner: { type: 'string', default: 'bench@anchorage.test' },
  },
});
if (positionals.length !== 1) {
  process.stderr.write('Usage: node bench/import-file.mjs FILE [--backlinks N] [--articles N] [--first N] [--owner EMAIL]\n');
  process.exit(1);
}
const [backlinks, articles] = [Number(values.backlinks), Number(values.articles)];
const bytes = await writeImportFile(positionals[0], { backlinks, articles, first: Number(values.first), owner: values.owner });
process.stdout.write(`${positionals[0]}: ${articles} articles, ${backlinks} backlinks, ${bytes} bytes\n`);
