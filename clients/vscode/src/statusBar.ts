/** The ragls status bar item: renders StatusModel.view(); a click opens the status menu. */
import * as vscode from 'vscode';
import type { RaglsServer } from './server';

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly sub: vscode.Disposable;

  constructor(private readonly server: RaglsServer) {
    this.item = vscode.window.createStatusBarItem('ragls.status', vscode.StatusBarAlignment.Left, 10);
    this.item.name = 'ragls index';
    this.item.command = 'ragls.showIndexStatus';
    this.sub = server.onDidChange(() => this.render());
    this.render();
    this.item.show();
  }

  render(): void {
    const view = this.server.model.view();
    this.item.text = view.text;
    this.item.backgroundColor =
      view.severity === 'error'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : view.severity === 'warning'
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
    const md = new vscode.MarkdownString('', true);
    md.isTrusted = { enabledCommands: ['ragls.reindex', 'ragls.showLog', 'ragls.openSettings', 'ragls.restart'] };
    md.appendMarkdown('**ragls**\n\n');
    for (const line of view.details) {
      md.appendText(line);
      md.appendMarkdown('  \n');
    }
    md.appendMarkdown(
      '\n---\n[$(refresh) Reindex](command:ragls.reindex) · [$(output) Log](command:ragls.showLog) · ' +
        '[$(gear) Settings](command:ragls.openSettings) · [$(debug-restart) Restart](command:ragls.restart)',
    );
    this.item.tooltip = md;
    this.item.accessibilityInformation = {
      label: `ragls ${view.state}: ${view.text.replace(/\$\([^)]*\)\s*/g, '')}`,
      role: 'button',
    };
  }

  dispose(): void {
    this.sub.dispose();
    this.item.dispose();
  }
}
