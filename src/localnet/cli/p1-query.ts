// localnet-cli `Query Height|Validators|Validator|Transaction`: raw bodies, p1's ❌ reports.
import type { Command } from 'commander';
import { command, exactArgs, type CommandContext } from './p1-context.ts';
import { P1Error, printQuery, printUnreachable, request } from './p1-io.ts';

export function queryCommand(context: CommandContext): Command {
  const query = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const url = context.remote();
    const { output } = context.environment;
    try {
      printQuery(
        output,
        await request(method, `${url}${path}`, body === undefined ? {} : { body }),
        url,
      );
    } catch (error: unknown) {
      if (!(error instanceof P1Error)) throw error;
      printUnreachable(output, url, error);
    }
  };
  const int = (value: string) => {
    const n = Number(value);
    if (!Number.isSafeInteger(n))
      throw new P1Error(
        `invalid argument "${value}": strconv.ParseInt: parsing "${value}": invalid syntax`,
      );
    return n;
  };
  return command(
    'Query',
    ['query'],
    "Commands related to querying on-chain data via the node's RPC server",
  )
    .addCommand(
      command('Height', ['height'], 'Get current block height')
        .argument('[args...]')
        .action(async (args: string[]) => {
          exactArgs(args, 0);
          await query('GET', '/v1/query/height');
        }),
    )
    .addCommand(
      command('Validators', ['validators'], 'Get all the data of all validators')
        .argument('[args...]')
        .option('--height <n>', 'block height to query, (default = 0, latest)', '0')
        .option('--page <n>', 'page number to return of paginated query (default 1)', '1')
        .option('--per_page <n>', 'number of results per page (default 1000, max=1000)', '1000')
        .action(
          async (args: string[], flags: { height: string; page: string; per_page: string }) => {
            exactArgs(args, 0);
            await query('POST', '/v1/query/validators', {
              height: int(flags.height),
              page: int(flags.page),
              per_page: int(flags.per_page),
            });
          },
        ),
    )
    .addCommand(
      command('Validator', ['validator'], 'Get the validator data of an address')
        .argument('[args...]')
        .option('--height <n>', 'block height to query, (default = 0, latest)', '0')
        .action(async (args: string[], flags: { height: string }) => {
          exactArgs(args, 1);
          await query('POST', '/v1/query/validator', {
            address: args[0],
            height: int(flags.height),
          });
        }),
    )
    .addCommand(
      command('Transaction', ['tx'], 'Get the transaction data the hash provided')
        .argument('[args...]')
        .action(async (args: string[]) => {
          exactArgs(args, 1);
          await query('POST', '/v1/query/tx', { hash: args[0] });
        }),
    );
}
