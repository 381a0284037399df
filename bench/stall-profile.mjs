// What held the server's event loop during each stall of a profiled run
// (`node bench/reads.mjs --only=loop --profile`): for every gap of more than 35 ms between the
// ticks of the server's 1 ms timer (bench/profiles/stalls.json), the CPU profile's samples that
// fall inside it, by self time and by the outermost frame of the service's own code. Busy time
// alone misleads under load, where the loop is never idle; this shows what ran instead of it. With
// each stall, the CPU time of the server's threads meanwhile and how often the kernel took the
// loop's thread off its core: samples of `(idle)` or of a trivial function inside a stall are time
// the thread waited for a core, not work.
//
//   node bench/stall-profile.mjs [profile] [stalls] [top=8]
//
// By default: the newest profile of a main thread (thread id 0; the pool threads write their own)
// and the stalls of the last run, both in bench/profiles/.
import { readdirSync, readFileSync } from 'node:fs';

const dir = new URL('./profiles/', import.meta.url).pathname;
const newestMain = () =>
  dir +
  readdirSync(dir)
    .filter((name) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(name))
    .sort()
    .at(-1);
const [profileFile = newestMain(), stallsFile = `${dir}stalls.json`, top = '8'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(profileFile, 'utf8'));
const stalls = JSON.parse(readFileSync(stallsFile, 'utf8'));

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const short = (url) => url.replace(/^.*node_modules\//, '').replace(/^.*\/dist\//, 'dist/').replace(/^file:\/\//, '');
const where = (node) => `${node.callFrame.functionName || '(anonymous)'} ${short(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;
/** The outermost frame of the service's own code (dist/) above a sample, or its own frame. */
const outermostOurs = (id) => {
  let found;
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const { url } = byId.get(at).callFrame;
    if (url.includes('/dist/') && !url.includes('node_modules')) found = at;
  }
  return found ?? id;
};

// Each sample's time: the profile's start plus the deltas so far (µs, the clock of process.hrtime).
const times = [];
let t = profile.startTime;
for (const delta of profile.timeDeltas) times.push((t += delta));

const ms = (us) => (us / 1000).toFixed(1);
const topOf = (map) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(top))
    .map(([id, us]) => `    ${ms(us).padStart(6)} ms  ${where(byId.get(id))}`);

stalls.sort((a, b) => b[1] - b[0] - (a[1] - a[0]));
console.log(`${stalls.length} stalls over 35 ms; longest first`);
for (const [start, end, cpuUs, preempted] of stalls) {
  const self = new Map();
  const ours = new Map();
  for (let i = 0; i < times.length; i++) {
    if (times[i] < start || times[i] > end) continue;
    const id = profile.samples[i];
    const us = profile.timeDeltas[i + 1] ?? 0;
    self.set(id, (self.get(id) ?? 0) + us);
    const outer = outermostOurs(id);
    ours.set(outer, (ours.get(outer) ?? 0) + us);
  }
  // Older stall files hold the times only.
  const cpu = cpuUs === undefined ? '' : `; the process's threads used ${ms(cpuUs)} ms of CPU`;
  const taken = preempted === undefined || preempted === null ? '' : `, the loop's thread was taken off its core ${preempted} times`;
  console.log(`\n${ms(end - start)} ms stall${cpu}${taken}`);
  console.log('  by self time:');
  console.log(topOf(self).join('\n'));
  console.log('  by outermost frame of ours:');
  console.log(topOf(ours).join('\n'));
}
