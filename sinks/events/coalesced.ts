/**
 * A task that runs one at a time and coalesces requests: asked while it runs, it runs once more
 * after, however many times it was asked. The sinks' registries follow the catalog with it (one
 * request per applied batch of the log).
 */
export class CoalescedTask {
  private running: Promise<void> = Promise.resolve();
  private queued = false;

  constructor(
    private readonly task: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  request(): void {
    if (this.queued) return;
    this.queued = true;
    this.running = this.running
      .then(() => {
        this.queued = false;
        return this.task();
      })
      .catch(this.onError);
  }

  /** Resolves when the runs requested so far have ended. */
  settled(): Promise<void> {
    return this.running;
  }
}
