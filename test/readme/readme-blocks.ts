import { readdirSync, readFileSync } from "node:fs";

const root = new URL("../../", import.meta.url);

/** The pages whose code blocks the tests check: README.md and every page in docs/, as repository paths. */
export function documentationPages(): string[] {
  const pages = readdirSync(new URL("docs/", root)).filter((name) => name.endsWith(".md"));
  return ["README.md", ...pages.sort().map((name) => `docs/${name}`)];
}

/** The text of a documentation page, by repository path. */
export function pageText(page: string): string {
  return readFileSync(new URL(page, root), "utf8");
}

/** A code block of a documentation page that claims to be a region of an example file. */
export interface ExampleBlock {
  page: string;
  file: string;
  region: string;
  code: string;
}

/** Every ```ts block of `page` preceded by `<!-- example: path#region -->`. */
export function exampleBlocks(page = "README.md"): ExampleBlock[] {
  const pattern = /<!-- example: ([^#\s]+)#([\w-]+) -->\s*```ts\n([\s\S]*?)```/g;
  return [...pageText(page).matchAll(pattern)].map(([, file = "", region = "", code = ""]) => ({
    page,
    file,
    region,
    code,
  }));
}

/** Every ```ts or ```typescript block of `page`, tagged or not. */
export function allTypeScriptBlocks(page = "README.md"): string[] {
  return [...pageText(page).matchAll(/```(?:ts|typescript)\n([\s\S]*?)```/g)].map(([, code = ""]) => code);
}

/** The lines between `// #region name` and the next `// #endregion` in an example file. */
export function exampleRegion(file: string, region: string): string {
  const text = readFileSync(new URL(file, root), "utf8");
  const start = text.indexOf(`// #region ${region}\n`);
  if (start === -1) throw new Error(`${file} has no region ${region}`);
  const bodyStart = start + `// #region ${region}\n`.length;
  const end = text.indexOf("// #endregion", bodyStart);
  return text.slice(bodyStart, end);
}
