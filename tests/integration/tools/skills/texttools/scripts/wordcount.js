let data = "";
process.stdin.on("data", (c) => { data += c; });
process.stdin.on("end", () => {
  const words = data.split(/\s+/).filter((w) => w.length > 0);
  console.log(JSON.stringify({ words: words.length }));
});
