// Type-checks a small program the way an agent author would: strict, with the repository's tsc.
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

/** Runs tsc on `dir/agent.ts` with an agent author's usual strict settings; returns its verdict. */
export async function typecheckAgent(dir: string): Promise<{ exit: number; output: string }> {
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'bundler',
        lib: ['ES2022', 'DOM'],
        strict: true,
        noEmit: true,
        skipLibCheck: true,
      },
      files: ['agent.ts'],
    }),
  )
  const tsc = Bun.spawn(
    ['node', resolve('node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')],
    { stdout: 'pipe', stderr: 'pipe' },
  )
  const output = (await new Response(tsc.stdout).text()) + (await new Response(tsc.stderr).text())
  return { exit: await tsc.exited, output }
}
