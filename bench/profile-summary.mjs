// Summarises a V8 .cpuprofile (from `node bench/reads.mjs --only=floor --profile`): the functions
// with the most self time, and the share of busy time spent under a few places of interest.
//
//   node bench/profile-summary.mjs bench/profiles/CPU.*.cpuprofile [top=25]
import { readFileSync } from 'node:fs';

const [file, top = '25'] = process.argv.slice(2);
if (!file || !/^\d+$/.test(top)) {
  console.error('usage: node bench/profile-summary.mjs FILE.cpuprofile [top=25] (one profile at a time)');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const self = new Map();
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i];
  self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

const where = (node) => {
  const { functionName, url, lineNumber } = node.callFrame;
  const short = url.replace(/^.*node_modules\//, '').replace(/^.*\/dist\//, 'dist/').replace(/^file:\/\//, '');
  return `${functionName || '(anonymous)'} ${short}:${lineNumber + 1}`;
};
const idle = new Set(['(idle)', '(program)']);
let total = 0;
let busy = 0;
const perFunction = new Map();
for (const [id, time] of self) {
  const node = byId.get(id);
  total += time;
  if (idle.has(node.callFrame.functionName)) continue;
  busy += time;
  const key = where(node);
  perFunction.set(key, (perFunction.get(key) ?? 0) + time);
}
console.log(`${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy (GC included)\n\nself time, share of busy:`);
for (const [key, time] of [...perFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(top))) {
  console.log(`${((time / busy) * 100).toFixed(1).padStart(5)} %  ${key}`);
}

// Inclusive time under frames whose location matches a pattern (each sample counted once).
const areas = {
  'better-sqlite3 prepare': (n) => n.callFrame.functionName === 'prepare' && /better-sqlite3/.test(n.callFrame.url),
  // better-sqlite3's native calls are sampled in the service's own frame that makes them (sqlite-driver.js).
  'better-sqlite3 all/run/get': (n) =>
    ['all', 'run', 'get', 'iterate'].includes(n.callFrame.functionName) && /better-sqlite3|dist\/db\/sqlite-driver\.js|^$/.test(n.callFrame.url),
  'kysely (building, compiling)': (n) => /kysely\/dist\/esm\/(query-builder|query-compiler|operation-node|parser|expression|dynamic)/.test(n.callFrame.url),
  'kysely (all)': (n) => /kysely\//.test(n.callFrame.url),
  'pg driver': (n) => /node_modules\/pg(-protocol)?\//.test(n.callFrame.url),
  'sanitiser and protected links (core/html, core/protected-anchors)': (n) => /dist\/core\/(html|protected-anchors)\.js/.test(n.callFrame.url),
  'htmlparser2': (n) => /htmlparser2|domhandler/.test(n.callFrame.url),
  'zod': (n) => /node_modules\/zod\//.test(n.callFrame.url),
  'fastify': (n) => /node_modules\/(fastify|find-my-way|light-my-request|avvio)\//.test(n.callFrame.url),
  'rate limiter': (n) => /rate-limiter-flexible/.test(n.callFrame.url),
  'keys.authenticate': (n) => n.callFrame.functionName === 'authenticate' && /keys\.js/.test(n.callFrame.url),
  // The MCP rows (`--only=mcp`): the endpoint, and the parts of a tool call around the read.
  'MCP endpoint (mcp/plugin handler)': (n) => n.callFrame.functionName === 'handler' && /dist\/mcp\/plugin\.js/.test(n.callFrame.url),
  'MCP tool call (mcp/server callTool, after its first await)': (n) => n.callFrame.functionName === 'callTool' && /dist\/mcp\/server\.js/.test(n.callFrame.url),
  'MCP result forms (mcp/server successOf)': (n) => n.callFrame.functionName === 'successOf' && /dist\/mcp\/server\.js/.test(n.callFrame.url),
  'MCP direct path (mcp/direct-call, answerToolCall)': (n) =>
    /dist\/mcp\/direct-call\.js/.test(n.callFrame.url) || (n.callFrame.functionName === 'answerToolCall' && /dist\/mcp\/server\.js/.test(n.callFrame.url)),
  'article windows and outlines (operations/article-window)': (n) => /dist\/operations\/article-window\.js/.test(n.callFrame.url),
  'oauth tokens.authenticate': (n) => n.callFrame.functionName === 'authenticate' && /oauth\/tokens\.js/.test(n.callFrame.url),
  'MCP SDK': (n) => /@modelcontextprotocol\//.test(n.callFrame.url),
  'web Request, Response, Headers, streams (undici)': (n) => /node:internal\/(deps\/undici|webstreams)/.test(n.callFrame.url),
  'JSON.stringify / serialise': (n) => /stringify|serialize/i.test(n.callFrame.functionName),
};
console.log('\ninclusive time, share of busy:');
for (const [name, matches] of Object.entries(areas)) {
  let time = 0;
  for (const [id, t] of self) {
    if (idle.has(byId.get(id).callFrame.functionName)) continue;
    for (let at = id; at !== undefined; at = parent.get(at)) {
      if (matches(byId.get(at))) {
        time += t;
        break;
      }
    }
  }
  console.log(`${((time / busy) * 100).toFixed(1).padStart(5)} %  ${name}`);
}
