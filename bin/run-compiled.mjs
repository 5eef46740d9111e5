// Runs the compiled CLI of build/ (scripts/build.mjs): what the npm package's bin, the image's entry
// point and a checkout with a current build all start. Plain JavaScript, no TypeScript loader.
/** Runs `filings-export` on argv with the job processors of build/jobs/ (loaded only by worker commands). */
export async function runCompiled(argv) {
  const { runCli } = await import('../build/src/cli/main.js');
  await runCli(argv, {
    loadJobs: async () => (await import('../build/jobs/index.js')).jobProcessors,
  });
}
