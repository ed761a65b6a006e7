package dev.ragls.intellij.ui;

import com.intellij.openapi.application.ApplicationManager;
import com.intellij.openapi.options.ShowSettingsUtil;
import com.intellij.openapi.project.Project;
import com.intellij.openapi.ui.popup.JBPopup;
import com.intellij.openapi.ui.popup.JBPopupFactory;
import com.intellij.openapi.wm.StatusBar;
import com.intellij.openapi.wm.StatusBarWidget;
import com.intellij.ui.awt.RelativePoint;
import com.intellij.ui.components.JBLabel;
import com.intellij.util.Consumer;
import com.intellij.util.ui.JBUI;
import dev.ragls.core.status.ServerState;
import dev.ragls.intellij.RaglsProjectService;
import dev.ragls.intellij.settings.RaglsConfigurable;
import org.jetbrains.annotations.NotNull;
import org.jetbrains.annotations.Nullable;

import javax.swing.BoxLayout;
import javax.swing.JButton;
import javax.swing.JPanel;
import java.awt.BorderLayout;
import java.awt.FlowLayout;
import java.awt.event.MouseEvent;

/** {@code RAG 1,234/5,000}, {@code RAG ✓}, {@code RAG ✗}; click for details, Reindex and Open Log. */
public final class RaglsStatusBarWidget implements StatusBarWidget, StatusBarWidget.TextPresentation {
    private final Project project;
    private final RaglsProjectService service;
    private final Runnable listener;
    private StatusBar statusBar;

    RaglsStatusBarWidget(Project project) {
        this.project = project;
        this.service = RaglsProjectService.getInstance(project);
        this.listener = () -> ApplicationManager.getApplication().invokeLater(() -> {
            if (statusBar != null && !project.isDisposed()) {
                statusBar.updateWidget(ID());
            }
        });
        service.status().addListener(listener);
    }

    @Override
    public @NotNull String ID() {
        return RaglsStatusBarWidgetFactory.ID;
    }

    @Override
    public void install(@NotNull StatusBar statusBar) {
        this.statusBar = statusBar;
    }

    @Override
    public @Nullable WidgetPresentation getPresentation() {
        return this;
    }

    @Override
    public @NotNull String getText() {
        return service.status().text();
    }

    @Override
    public float getAlignment() {
        return 0.5f;
    }

    @Override
    public @Nullable String getTooltipText() {
        return "<html>" + escape(service.status().tooltip()).replace("\n", "<br>") + "<br><i>Click for actions</i></html>";
    }

    @Override
    public @Nullable Consumer<MouseEvent> getClickConsumer() {
        return this::showPopup;
    }

    private void showPopup(MouseEvent e) {
        JPanel panel = new JPanel(new BorderLayout());
        panel.setBorder(JBUI.Borders.empty(8));
        JPanel lines = new JPanel();
        lines.setLayout(new BoxLayout(lines, BoxLayout.Y_AXIS));
        for (String line : service.status().details()) {
            lines.add(new JBLabel(line));
        }
        panel.add(lines, BorderLayout.CENTER);

        JPanel buttons = new JPanel(new FlowLayout(FlowLayout.LEFT, 4, 0));
        JBPopup[] popup = new JBPopup[1];
        boolean running = service.status().serverState() == ServerState.RUNNING;
        buttons.add(button("Reindex", running, () -> service.reindex(false)));
        buttons.add(button("Full Reindex", running, () -> service.reindex(true)));
        buttons.add(button("Open Log", true, service::openLog));
        buttons.add(button("Restart Server", true, service::restart));
        buttons.add(button("Settings\u2026", true,
                () -> ShowSettingsUtil.getInstance().showSettingsDialog(project, RaglsConfigurable.class)));
        for (java.awt.Component c : buttons.getComponents()) {
            ((JButton) c).addActionListener(a -> {
                if (popup[0] != null) {
                    popup[0].cancel();
                }
            });
        }
        panel.add(buttons, BorderLayout.SOUTH);

        popup[0] = JBPopupFactory.getInstance().createComponentPopupBuilder(panel, null)
                .setTitle("ragls")
                .setRequestFocus(true)
                .setCancelOnClickOutside(true)
                .createPopup();
        popup[0].show(new RelativePoint(e));
    }

    private static JButton button(String text, boolean enabled, Runnable action) {
        JButton b = new JButton(text);
        b.setEnabled(enabled);
        b.addActionListener(a -> action.run());
        return b;
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    @Override
    public void dispose() {
        service.status().removeListener(listener);
        statusBar = null;
    }
}
