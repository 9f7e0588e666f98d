/** Where unexpected failures are reported; tests pass a collecting one. */
export interface Log {
  error(message: string, detail?: unknown): void;
}

/** stderr, with only an error's message: stacks and request details may carry secrets. */
export const consoleLog: Log = {
  error(message, detail) {
    console.error(`[shelf] ${message}`, detail instanceof Error ? detail.message : detail ?? "");
  },
};
