"""The build actions: one module per exporter command, each with run(config).

registry holds the registry of actions (registry.ACTIONS: command, mnemonic, module, config
class, worker, remote), those of reports/ included, and every action's typed config;
program_graph is what the lowering records for the program's report (reports/report.py). An
action reads its config, writes its declared outputs, and raises core.errors.UserError for
anything the user fixes in a BUILD file or model.

May import core, formats and other actions; never driver, checks or reports.
"""
