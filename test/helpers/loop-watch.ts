/**
 * Runs `work` while a timer ticks every `everyMs` on this event loop; gives its result and the
 * longest gap between ticks (ms): how long something held the loop meanwhile. `longestCpu` is the
 * most CPU time this thread spent within one gap (ms; the gap itself where Node cannot tell): on a
 * machine busier than its cores, a gap also counts the time the thread waited for a core, which
 * only `longestCpu` leaves out.
 */
export async function longestStallDuring<T>(work: () => Promise<T>, everyMs = 2): Promise<{ result: T; longest: number; longestCpu: number }> {
  let longest = 0;
  let longestCpu = 0;
  const cpu = () => {
    if (typeof process.threadCpuUsage !== 'function') return performance.now();
    const { user, system } = process.threadCpuUsage();
    return (user + system) / 1000;
  };
  let last = performance.now();
  let lastCpu = cpu();
  const ticker = setInterval(() => {
    const now = performance.now();
    const nowCpu = cpu();
    longest = Math.max(longest, now - last);
    longestCpu = Math.max(longestCpu, nowCpu - lastCpu);
    last = now;
    lastCpu = nowCpu;
  }, everyMs);
  try {
    const result = await work();
    return { result, longest, longestCpu };
  } finally {
    clearInterval(ticker);
  }
}
