// Runs the compiled CLI of build/ (scripts/build.mjs): what the npm package's bin, the image's entry
// point and a checkout with a current build all start. Plain JavaScript, no TypeScript loader: the
// bundle of build/cli/ (scripts/bundle-cli.mjs), a chunk per command loaded when it runs.
import module from 'node:module';

/** Runs `filings-export` on argv with the job definitions (loaded only by worker commands). */
export async function runCompiled(argv) {
  // Node 22.1+ keeps the compiled code of build/ on disk between runs (under the temp dir; a
  // directory it cannot write is skipped), so a short command such as `status` starts with less
  // CPU. Node 20 has no such call. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
  module.enableCompileCache?.();
  const { runCli } = await import('../build/cli/main.js');
  await runCli(argv, {
    loadJobs: async () => (await import('../build/cli/jobs.js')).jobDefinitions,
  });
}
