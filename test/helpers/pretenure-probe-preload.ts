/**
 * TEST ONLY. A Node preload (`node --import dist/test/helpers/pretenure-probe-preload.js ...`) for
 * test/bin/v8-settings.test.ts: on SIGUSR2 it makes 400,000 small object literals at one site and
 * keeps them all. With allocation-site pretenuring on, V8 then pretenures that site, and
 * `--trace-pretenuring-statistics` prints "pretenuring:" lines; with it off, none. Prints
 * "pretenure probe ready" once it listens, "pretenure probe done" on stdout when finished.
 */
const kept: unknown[] = [];
const made = (i: number): unknown => ({ a: i, b: [i, i + 1] });

process.on('SIGUSR2', () => {
  for (let i = 0; i < 400_000; i++) kept.push(made(i));
  process.stdout.write('pretenure probe done\n');
});
// Before this handler is in place a SIGUSR2 would end the process: the test waits for this line.
process.stdout.write('pretenure probe ready\n');
