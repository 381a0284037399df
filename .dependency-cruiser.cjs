// The dependency rules of docs/architecture.md, checked by `npm run lint` (dependency-cruiser).
// The HTTP layer, the transports, the CLI and the composition roots: nothing below them imports them.
const upper = '^src/(http|rest|mcp|web|oauth|cli)/|^src/(main|runtime|app)\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'A cycle ties modules together: move what both need down a layer.', from: {}, to: { circular: true } },
    {
      name: 'core-is-pure',
      severity: 'error',
      comment: 'core/ holds algorithms: it imports only core/ and libraries, no threads, process or I/O (those live in platform/).',
      from: { path: '^src/core/' },
      to: { pathNot: '^src/core/|^node_modules/|^(node:)?(crypto|buffer|timers/promises)$' },
    },
    {
      name: 'migrations-are-frozen',
      severity: 'error',
      comment: 'A migration ran against the code of its day: it imports only other migrations and libraries; live derivations come in its context.',
      from: { path: '^src/db/migrations/' },
      to: { path: '^src/', pathNot: '^src/db/migrations/' },
    },
    {
      name: 'live-code-does-not-import-migrations',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/db/(migrations/|migrate\\.ts$)' },
      to: { path: '^src/db/migrations/' },
    },
    {
      name: 'platform-stands-alone',
      severity: 'error',
      comment: 'platform/ (threads, scheduling, GC) knows nothing of the domain.',
      from: { path: '^src/platform/' },
      to: { path: '^src/', pathNot: '^src/platform/' },
    },
    {
      name: 'db-is-below-services',
      severity: 'error',
      from: { path: '^src/db/' },
      to: { path: `^src/(services|operations)/|${upper}` },
    },
    {
      name: 'bodies-go-through-the-body-store',
      severity: 'error',
      comment: 'Only db/body-store.ts knows how each database moves a large body (SQLite\'s off-loop thread, PostgreSQL\'s pieces): the layers above never pick a connection.',
      from: { path: '^src/', pathNot: '^src/db/' },
      to: { path: '^src/db/(off-loop|body-pieces)\\.ts$' },
    },
    {
      name: 'services-are-below-operations',
      severity: 'error',
      from: { path: '^src/services/' },
      to: { path: `^src/operations/|${upper}` },
    },
    {
      name: 'operations-are-below-transports',
      severity: 'error',
      comment: 'One operation list drives REST, OpenAPI and MCP: it knows none of them.',
      from: { path: '^src/operations/' },
      to: { path: upper },
    },
    {
      name: 'http-is-below-the-transports',
      severity: 'error',
      comment: 'http/ is the plumbing every transport shares: it imports no transport, the CLI or the composition roots.',
      from: { path: '^src/http/' },
      to: { path: '^src/(rest|mcp|web|oauth|cli)/|^src/(main|runtime|app)\\.ts$' },
    },
    {
      name: 'rest-imports-no-other-transport',
      severity: 'error',
      comment: 'The transports do not import each other: what two need moves down (http/, services/); src/app.ts wires them.',
      from: { path: '^src/rest/' },
      to: { path: '^src/(mcp|web|oauth)/' },
    },
    {
      name: 'mcp-imports-no-other-transport',
      severity: 'error',
      comment: 'The transports do not import each other: what two need moves down (http/, services/); src/app.ts wires them.',
      from: { path: '^src/mcp/' },
      to: { path: '^src/(rest|web|oauth)/' },
    },
    {
      name: 'web-imports-no-other-transport',
      severity: 'error',
      comment: 'The transports do not import each other: what two need moves down (http/, services/); src/app.ts wires them.',
      from: { path: '^src/web/' },
      to: { path: '^src/(rest|mcp|oauth)/' },
    },
    {
      name: 'oauth-imports-no-other-transport',
      severity: 'error',
      comment: 'The transports do not import each other: what two need moves down (http/, services/); src/app.ts wires them.',
      from: { path: '^src/oauth/' },
      to: { path: '^src/(rest|mcp|web)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // The editor is a browser bundle of its own (scripts/build.mjs).
    exclude: { path: '^src/web/editor/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
