// What the service's event-loop thread is doing, seen from a process of the bench's own (started by
// bench/reads.mjs with WATCHED_PID): every 2 ms it reads the thread's state from /proc (Linux), and
// for a thread not running its system call and kernel wait channel (`R running` is running or
// waiting for a core; `D pwrite64 ext4_da_write_end` is asleep in the kernel, waiting for the disk).
// The bench matches the samples to the loop's gaps over 50 ms, which tells a stall of the loop's
// own work from one blocked in the kernel, which its CPU time and run-queue wait cannot: a thread
// blocked there neither runs nor waits for a core. It ran as a thread inside the service's process
// until 2026-11-30, where its V8 heap, stack and malloc arena were in the RSS the bench measures (a
// thread like it adds 14 MB to a bare node; the bench's peaks fell by 2–15 MB without it).
// It samples from a 'reset' to the next 'samples', which is answered with `{ samples }`: [ms since
// the epoch, label], at most the last minute's (null off Linux).
import { existsSync, readFileSync } from 'node:fs';

const pid = process.env.WATCHED_PID;
// The event loop's thread is the process's first: its thread id is the process id.
const taskDir = `/proc/${pid}/task/${pid}`;
const watching = existsSync(`${taskDir}/stat`);
// x86-64 numbers of the system calls the loop makes most; others are shown as numbers.
const calls = { 0: 'read', 1: 'write', 7: 'poll', 17: 'pread64', 18: 'pwrite64', 74: 'fsync', 75: 'fdatasync', 202: 'futex', 232: 'epoll_wait', 281: 'epoll_pwait' };
const read = (file) => {
  try {
    return readFileSync(`${taskDir}/${file}`, 'utf8').trim();
  } catch {
    return '?';
  }
};
const keptSamples = 30_000;
let samples = [];
const sample = () => {
  const at = performance.timeOrigin + performance.now();
  const stat = read('stat');
  const state = stat.charAt(stat.lastIndexOf(')') + 2);
  let label = `${state} running`;
  if (state !== 'R') {
    const call = read('syscall').split(' ')[0];
    if (call !== 'running') label = `${state} ${calls[call] ?? call} ${read('wchan')}`;
  }
  samples.push([at, label]);
  if (samples.length > keptSamples) samples = samples.slice(-keptSamples / 2);
};
let sampling;

process.on('message', (message) => {
  if (message === 'reset') {
    samples = [];
    if (watching) sampling ??= setInterval(sample, 2);
    process.send({ reset: true });
  } else if (message === 'samples') {
    clearInterval(sampling);
    sampling = undefined;
    process.send({ samples: watching ? samples : null });
  } else if (message === 'stop') {
    process.exit(0);
  }
});
// A bench that ended without stopping it (an error) leaves no sampler behind.
process.on('disconnect', () => process.exit(0));
process.send({ watching });
