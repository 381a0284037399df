/**
 * Runs `work` while a timer ticks every `everyMs` on this event loop; gives its result and the
 * longest gap between ticks (ms): how long something held the loop meanwhile.
 */
export async function longestStallDuring<T>(work: () => Promise<T>, everyMs = 2): Promise<{ result: T; longest: number }> {
  let longest = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    longest = Math.max(longest, performance.now() - last);
    last = performance.now();
  }, everyMs);
  try {
    const result = await work();
    return { result, longest };
  } finally {
    clearInterval(ticker);
  }
}
