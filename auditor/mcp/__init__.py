"""kafka-audit as a Model Context Protocol server (`kafka-audit mcp`): a face of the commands
like the command line, never a second implementation.

    server.py   MCPServer (the SDK's, mcp 2.x): tools, resources, prompts; stdio and Streamable HTTP
    tools.py    TOOLS: each tool a thin call into auditor/commands/ or auditor/lint/
    schemas.py  every tool's output schema (the audits': docs/report.schema.json, extended)
    results.py  structured content and quotable text within the size limit; exit codes; cited rules
    roots.py    the directories a model's paths must resolve under; inline files
    prompts.py  MSK patch readiness; review of a Kafka change

Nothing below the commands imports this package, and it imports nothing of auditor/cli/. The
SDK is imported only here, so only `kafka-audit mcp` loads it.
"""
