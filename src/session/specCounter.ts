// How many spec files a project has (specs/, docs/, adrs/, specification.yaml), for the
// monitor's header: read on demand, rescanned in the background at most every few seconds,
// so a view that asks on every render never waits on the file system.
const RESCAN_MS = 5000;

export class SpecCounter {
  private count = 0;
  private checkedAt = 0;
  private checking = false;

  /** `onChange` runs when a rescan finds a different count. */
  constructor(
    private readonly projectDir: string,
    private readonly onChange: () => void,
  ) {}

  /** The last count; starts a rescan when the last one is older than a few seconds. */
  current(): number {
    if (!this.checking && Date.now() - this.checkedAt > RESCAN_MS) {
      this.checking = true;
      void import('../project/specs.js')
        .then((m) => m.discoverSpecs(this.projectDir))
        .then(
          (found) => {
            const changed = found.length !== this.count;
            this.count = found.length;
            if (changed) this.onChange();
          },
          () => undefined,
        )
        .finally(() => {
          this.checking = false;
          this.checkedAt = Date.now();
        });
    }
    return this.count;
  }
}
