#!/usr/bin/env node
// Entry point of the container image, which holds the files of the npm package (`npm pack`, see the
// Dockerfile): the compiled JavaScript of build/, as the package's bin runs it, with no TypeScript
// loader (`worker --help` 0.22 s against 0.70 s warm / 0.91 s cold through tsx; docs/decisions.md).
import { runCompiled } from './run-compiled.mjs';

await runCompiled(process.argv);
