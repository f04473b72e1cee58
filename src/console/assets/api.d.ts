// The console imports this browser module as text (`with { type: "text" }`) to embed it.
declare const text: string;
export default text;
