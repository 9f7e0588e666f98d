/**
 * A promise with a deadline: what `p` settles to, or a rejection with `late()`'s error once `ms`
 * have passed first. `p` itself runs on (a promise cannot be stopped): a caller that must let go
 * of what it holds does so when it catches the error. The timer never outlives the race.
 */
export async function within<T>(p: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => timer = setTimeout(() => reject(late()), ms)),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
