// The console's files are imported as text so `bun build --compile` embeds them in the binary.
declare module "*.css" {
  const text: string;
  export default text;
}
declare module "*.svg" {
  const text: string;
  export default text;
}
