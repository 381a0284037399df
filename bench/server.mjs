// The service under test, in a process of its own (started by bench/reads.mjs): the real app
// from dist/ on a free port, reporting its event-loop delay and its stalls over 50 ms to the parent
// over IPC (the parent reads its peak RSS from /proc, at no cost to the server).
// Settings come from the environment (DATA_DIR or DATABASE_URL, LOG_LEVEL).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';

const dist = process.env.ANCHORAGE_DIST ?? new URL('../dist', import.meta.url).pathname;
const { loadSettings } = await import(`${dist}/config.js`);
const { buildApp } = await import(`${dist}/app.js`);
const { openRuntime } = await import(`${dist}/runtime.js`);

const settings = loadSettings({ ...process.env, PORT: '0', HOST: '127.0.0.1', DEMO_DATA: 'off' });
const runtime = await openRuntime(settings);
const { app, stop, warm } = await buildApp({ settings, services: runtime.services });
await warm();
await app.listen({ port: 0, host: '127.0.0.1' });

// The loop's stalls: the intervals between the ticks of a 1 ms timer. Each interval holds a stall
// and up to one period of the timer, so a 10 ms timer counted up to 10 ms of idle time into it.
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();

const statusFile = '/proc/thread-self/status';
/** How often the kernel took the event loop's thread off its core so far (Linux; else null). */
const preemptions = existsSync(statusFile)
  ? () => Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(statusFile, 'utf8'))[1])
  : () => null;
const schedstatFile = '/proc/thread-self/schedstat';
/**
 * The event loop's thread so far (Linux; else null): nanoseconds on a core, and nanoseconds ready
 * to run but waiting for one (the scheduler's run queue).
 */
const loopThread = existsSync(schedstatFile)
  ? () => {
      const [ran, waited] = readFileSync(schedstatFile, 'utf8').split(' ').map(Number);
      return { ran, waited };
    }
  : () => null;
const statFile = '/proc/stat';
/**
 * Milliseconds the machine's CPUs, together, have lost so far to other guests of its hypervisor
 * (Linux's `steal`, in USER_HZ ticks of 10 ms; else null): a thread on a CPU the host took away
 * neither runs nor waits on the guest's run queue.
 */
const stolenMs = existsSync(statFile) ? () => Number(readFileSync(statFile, 'utf8').split('\n', 1)[0].trim().split(/\s+/)[8]) * 10 : () => null;
const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

// Every run: each gap of more than 50 ms between the ticks of a 10 ms timer since the last reset
// (it holds a stall of 40 ms or more; the histogram above tells the longest to the millisecond),
// with the CPU time of the process's threads meanwhile, how long the loop's thread ran and how
// long it waited for a core, the CPU time the hypervisor took from the machine, and the collector's
// pauses inside it (V8's `gc` entries, which arrive after the pause and are matched at the
// report). What held the loop without a profile: its own work, the collector, a wait for a core,
// or a machine whose CPUs were taken away.
const stallsOver50 = [];
const collections = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) collections.push([entry.startTime, entry.startTime + entry.duration, entry.detail?.kind]);
  if (collections.length > 20_000) collections.splice(0, collections.length - 20_000);
}).observe({ entryTypes: ['gc'] });
let tick = { at: performance.now(), cpu: cpuMicros(), loop: loopThread(), stolen: stolenMs() };
setInterval(() => {
  const now = { at: performance.now(), cpu: cpuMicros(), loop: loopThread(), stolen: stolenMs() };
  if (now.at - tick.at > 50) {
    const loop = now.loop && { ranMs: (now.loop.ran - tick.loop.ran) / 1e6, waitedMs: (now.loop.waited - tick.loop.waited) / 1e6 };
    const stolenMsInGap = now.stolen === null ? null : now.stolen - tick.stolen;
    stallsOver50.push({ from: tick.at, to: now.at, cpuMs: (now.cpu - tick.cpu) / 1000, loop, stolenMs: stolenMsInGap });
  }
  tick = now;
}, 10).unref();

/** The collections' kinds (`PerformanceGCEntry.detail.kind`). */
const gcKinds = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};

/**
 * Each gap over 50 ms: its length, when it was (`from`, `to`: ms since the epoch, to match the
 * samples of bench/loop-watcher.mjs), and what the process did meanwhile.
 */
const stallReport = () =>
  stallsOver50.map(({ from, to, cpuMs, loop, stolenMs }) => {
    const inside = collections.filter(([start, end]) => end > from && start < to);
    const gcMs = inside.reduce((sum, [start, end]) => sum + Math.min(end, to) - Math.max(start, from), 0);
    const kinds = [...new Set(inside.map(([, , kind]) => gcKinds[kind] ?? `kind ${kind}`))].join(', ');
    return { ms: to - from, from: performance.timeOrigin + from, to: performance.timeOrigin + to, cpuMs, loop, stolenMs, gcMs, kinds };
  });

// With --profile (STALLS_FILE set): every gap of more than 35 ms between the ticks of a 1 ms timer,
// in microseconds of the clock the CPU profile's samples use, for bench/stall-profile.mjs; with the
// CPU time the whole process used meanwhile (every thread) and how often the kernel took the event
// loop's thread off its core for another (Linux: nonvoluntary context switches; else null).
const stalls = [];
if (process.env.STALLS_FILE) {
  let last = { at: process.hrtime.bigint(), cpu: cpuMicros(), preempted: preemptions() };
  setInterval(() => {
    const now = { at: process.hrtime.bigint(), cpu: cpuMicros(), preempted: preemptions() };
    if (now.at - last.at > 35_000_000n) {
      stalls.push([Number(last.at / 1000n), Number(now.at / 1000n), now.cpu - last.cpu, now.preempted === null ? null : now.preempted - last.preempted]);
    }
    last = now;
  }, 1).unref();
}

/** Each V8 space of the event loop's heap that holds a megabyte or more: used / physical MB. */
const spaces = () =>
  getHeapSpaceStatistics()
    .filter((space) => space.physical_space_size >= 2 ** 20)
    .map((space) => `${space.space_name.replace(/_space$/, '')} ${Math.round(space.space_used_size / 2 ** 20)}/${Math.round(space.physical_space_size / 2 ** 20)}`)
    .join(', ');

process.on('message', async (message) => {
  if (message === 'reset') {
    delay.reset();
    stallsOver50.length = 0;
    collections.length = 0;
    process.send({ reset: true });
  } else if (message === 'report') {
    const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
    const mb = (bytes) => Math.round(bytes / 2 ** 20);
    process.send({
      delayMaxMs: delay.max / 1e6,
      delayP99Ms: delay.percentile(99) / 1e6,
      stalls: stallReport(),
      rssMb: rss / 2 ** 20,
      memory: `heap ${mb(heapUsed)}/${mb(heapTotal)} (${spaces()}), external ${mb(external)} (array buffers ${mb(arrayBuffers)})`,
    });
  } else if (message === 'settle') {
    // The requests a load generator left when it stopped still run (a large edit waits for its
    // turn on the pool): their memory belongs to the phase's load.
    await app.handlersSettled(60_000);
    process.send({ settled: true });
  } else if (message === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send({ cpuMicros: user + system });
  } else if (message === 'stop') {
    if (process.env.STALLS_FILE) writeFileSync(process.env.STALLS_FILE, JSON.stringify(stalls));
    await stop();
    await runtime.close();
    process.exit(0);
  }
});
process.send({ port: app.server.address().port });
