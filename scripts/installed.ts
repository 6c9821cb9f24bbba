// `npm ci`'s last step (`prepare`): one line saying what was installed and what to run next. npm may run on
// any Node ≥ 20; the project brings its own Node 24 (the `node-<os>-<cpu>` optional dependency), which every `npm run …` uses.
const npmNode = /node\/(v[\d.]+)/.exec(process.env.npm_config_user_agent ?? "")?.[1]
const brought = npmNode === undefined || npmNode === process.version
  ? ""
  : ` npm ran on this machine's Node ${npmNode}, so the project brought its own Node ${process.version} ` +
    "(node_modules/.bin/node), which npm start, npm test and every npm run use."
console.log(`platform-api: installed.${brought} Next: npm start`)
