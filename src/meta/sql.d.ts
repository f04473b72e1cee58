// Migration SQL files are imported as text so the bundler embeds them in the binary.
declare module "*.sql" {
  const text: string;
  export default text;
}
