// The service under test, in a process of its own (started by bench/reads.mjs): the real app
// from dist/ on a free port, reporting its event-loop delay to the parent over IPC (the parent reads
// its peak RSS from /proc, at no cost to the server).
// Settings come from the environment (DATA_DIR or DATABASE_URL, LOG_LEVEL).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';

const dist = process.env.ANCHORAGE_DIST ?? new URL('../dist', import.meta.url).pathname;
const { loadSettings } = await import(`${dist}/config.js`);
const { buildApp } = await import(`${dist}/http/app.js`);
const { openRuntime } = await import(`${dist}/runtime.js`);

const settings = loadSettings({ ...process.env, PORT: '0', HOST: '127.0.0.1', DEMO_DATA: 'off' });
const runtime = await openRuntime(settings);
const { app, stop, warm } = await buildApp({ settings, services: runtime.services });
await warm();
await app.listen({ port: 0, host: '127.0.0.1' });

const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();

// With --profile (STALLS_FILE set): every gap of more than 35 ms between the ticks of a 1 ms timer,
// in microseconds of the clock the CPU profile's samples use, for bench/stall-profile.mjs; with the
// CPU time the whole process used meanwhile (every thread) and how often the kernel took the event
// loop's thread off its core for another (Linux: nonvoluntary context switches; else null).
const stalls = [];
if (process.env.STALLS_FILE) {
  const statusFile = '/proc/thread-self/status';
  const preemptions = existsSync(statusFile)
    ? () => Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(statusFile, 'utf8'))[1])
    : () => null;
  const cpuMicros = () => {
    const { user, system } = process.cpuUsage();
    return user + system;
  };
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
    process.send({ reset: true });
  } else if (message === 'report') {
    const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
    const mb = (bytes) => Math.round(bytes / 2 ** 20);
    process.send({
      delayMaxMs: delay.max / 1e6,
      delayP99Ms: delay.percentile(99) / 1e6,
      rssMb: rss / 2 ** 20,
      memory: `heap ${mb(heapUsed)}/${mb(heapTotal)} (${spaces()}), external ${mb(external)} (array buffers ${mb(arrayBuffers)})`,
    });
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
