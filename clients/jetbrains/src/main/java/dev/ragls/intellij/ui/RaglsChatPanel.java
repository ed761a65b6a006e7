package dev.ragls.intellij.ui;

import com.intellij.openapi.Disposable;
import com.intellij.openapi.actionSystem.AnActionEvent;
import com.intellij.openapi.actionSystem.CustomShortcutSet;
import com.intellij.openapi.application.ApplicationManager;
import com.intellij.openapi.application.ModalityState;
import com.intellij.openapi.fileEditor.OpenFileDescriptor;
import com.intellij.openapi.project.DumbAwareAction;
import com.intellij.openapi.project.Project;
import com.intellij.openapi.vfs.LocalFileSystem;
import com.intellij.openapi.vfs.VirtualFile;
import com.intellij.openapi.vfs.VirtualFileManager;
import com.intellij.ui.components.JBCheckBox;
import com.intellij.ui.components.JBScrollPane;
import com.intellij.ui.components.JBTextArea;
import com.intellij.util.ui.JBUI;
import com.intellij.util.ui.UIUtil;
import dev.ragls.core.chat.ChatException;
import dev.ragls.core.chat.OpenAiChatClient;
import dev.ragls.core.chat.RagChat;
import dev.ragls.core.protocol.Chunk;
import dev.ragls.core.protocol.FeedbackParams;
import dev.ragls.core.protocol.IndexStatus;
import dev.ragls.core.protocol.RetrieveParams;
import dev.ragls.intellij.RaglsProjectService;
import dev.ragls.intellij.actions.ContextCopier;
import dev.ragls.intellij.settings.RaglsApiKeyStore;
import dev.ragls.intellij.settings.RaglsSettings;
import org.jetbrains.annotations.NotNull;

import javax.swing.JButton;
import javax.swing.JEditorPane;
import javax.swing.JPanel;
import javax.swing.event.HyperlinkEvent;
import java.awt.BorderLayout;
import java.awt.FlowLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The chat tool window. The history shows what the user typed; what is sent to the model has
 * the {@code <rag_context>} block in front. Sources are listed under each answer as
 * {@code file:line} links that open the file at that line. The "Plan a change" toggle asks
 * {@code rag/retrieve} with intent {@code change} for the messages sent while it is on (a task,
 * bug report or commit message: the server ranks the code the change will touch). Under each
 * finished answer that had ragls context, "Helpful" / "Not helpful" rate it ({@code rag/feedback}
 * with the answer's {@code resultId}; the server stores the rating, docs/feedback.md).
 */
public final class RaglsChatPanel extends JPanel implements Disposable {
    private static final long serialVersionUID = 1L;

    /** One exchange as displayed (mutable while streaming). */
    private static final class ViewTurn {
        final String userText;
        /** Sent with intent {@code change} ("Plan a change" on). */
        final boolean change;
        final StringBuilder answer = new StringBuilder();
        volatile String note;
        volatile String error;
        volatile List<Chunk> sources = List.of();
        /** The retrieval's id for rag/feedback (null: nothing to rate), set once the answer is done. */
        volatile String resultId;
        volatile boolean done;
        /** How the last rating went, one line. */
        volatile String rated;

        ViewTurn(String userText, boolean change) {
            this.userText = userText;
            this.change = change;
        }
    }

    private final Project project;
    private final RaglsProjectService service;
    private final RagChat chat = new RagChat();
    private final List<ViewTurn> turns = new ArrayList<>();
    private final JEditorPane history = new JEditorPane("text/html", "");
    private final JBTextArea input = new JBTextArea(4, 40);
    private final JButton send = new JButton("Send");
    private final JButton stop = new JButton("Stop");
    /** Per conversation, not a setting: on, messages are retrieved with intent "change". */
    private final JBCheckBox planChange = new JBCheckBox("Plan a change");
    private final AtomicBoolean renderQueued = new AtomicBoolean();
    private volatile OpenAiChatClient current;
    /** Set by Stop: also ends a retrieval in progress (and cancels it on the server). */
    private final AtomicBoolean stopRequested = new AtomicBoolean();

    public RaglsChatPanel(@NotNull Project project) {
        super(new BorderLayout());
        this.project = project;
        this.service = RaglsProjectService.getInstance(project);

        history.setEditable(false);
        history.putClientProperty(JEditorPane.HONOR_DISPLAY_PROPERTIES, Boolean.TRUE);
        history.setFont(UIUtil.getLabelFont());
        history.addHyperlinkListener(e -> {
            if (e.getEventType() == HyperlinkEvent.EventType.ACTIVATED) {
                if (e.getDescription() != null && e.getDescription().startsWith("rate:")) {
                    rate(e.getDescription());
                } else {
                    openSource(e.getDescription());
                }
            }
        });
        add(new JBScrollPane(history), BorderLayout.CENTER);

        input.setLineWrap(true);
        input.setWrapStyleWord(true);
        updateEmptyText();
        new DumbAwareAction() {
            @Override
            public void actionPerformed(@NotNull AnActionEvent e) {
                sendMessage();
            }
        }.registerCustomShortcutSet(CustomShortcutSet.fromString("control ENTER", "meta ENTER"), input, this);

        JButton copy = new JButton("Copy with Context");
        copy.setToolTipText("Copy the message with the project's <rag_context> in front");
        copy.addActionListener(e -> {
            String text = input.getText();
            if (!text.isBlank()) {
                ContextCopier.copy(project, text, intent());
            }
        });
        planChange.setToolTipText("<html>On: your message describes a change to make (a task, a bug report, a commit "
                + "message),<br>and the context is the code it will touch: files whose past commits read alike "
                + "rank higher,<br>and code comes before docs and configuration (rag/retrieve intent \"change\").<br>"
                + "Off: a question about how the code works (the default ranking).</html>");
        planChange.addActionListener(e -> updateEmptyText());
        JButton clear = new JButton("New Chat");
        clear.addActionListener(e -> {
            chat.clear();
            turns.clear();
            render();
        });
        send.addActionListener(e -> sendMessage());
        stop.addActionListener(e -> {
            stopRequested.set(true);
            OpenAiChatClient c = current;
            if (c != null) {
                c.cancel();
            }
        });
        stop.setEnabled(false);

        JPanel buttons = new JPanel(new FlowLayout(FlowLayout.RIGHT, 4, 0));
        buttons.add(clear);
        buttons.add(copy);
        buttons.add(stop);
        buttons.add(send);
        JPanel controls = new JPanel(new BorderLayout(4, 0));
        controls.add(planChange, BorderLayout.WEST);
        controls.add(buttons, BorderLayout.EAST);
        JPanel bottom = new JPanel(new BorderLayout(0, 4));
        bottom.setBorder(JBUI.Borders.empty(4));
        bottom.add(new JBScrollPane(input), BorderLayout.CENTER);
        bottom.add(controls, BorderLayout.SOUTH);
        add(bottom, BorderLayout.SOUTH);
        render();
    }

    /** The intent for the next message: "change" while the toggle is on, else the server's default. */
    private RetrieveParams.Intent intent() {
        return planChange.isSelected() ? RetrieveParams.Intent.CHANGE : null;
    }

    private void updateEmptyText() {
        input.getEmptyText().setText(planChange.isSelected()
                ? "Describe the change to make: a task, a bug report (Ctrl+Enter to send)"
                : "Ask about this project (Ctrl+Enter to send)");
        input.repaint();
    }

    private void sendMessage() {
        String text = input.getText();
        if (text.isBlank() || current != null || !send.isEnabled()) {
            return;
        }
        input.setText("");
        RetrieveParams.Intent intent = intent();
        ViewTurn vt = new ViewTurn(text, intent == RetrieveParams.Intent.CHANGE);
        turns.add(vt);
        setBusy(true);
        stopRequested.set(false);
        render();
        ApplicationManager.getApplication().executeOnPooledThread(() -> {
            RaglsSettings settings = RaglsSettings.getInstance();
            OpenAiChatClient client = new OpenAiChatClient(settings.chatConfig(RaglsApiKeyStore.get()));
            current = client;
            try {
                chat.send(text, settings.chatOptions().withIntent(intent), service.retriever(stopRequested::get), client, new RagChat.Listener() {
                    @Override
                    public void onContext(RagChat.Prepared prepared) {
                        vt.note = prepared.ragNote();
                        vt.sources = prepared.sources();
                        vt.resultId = prepared.resultId();
                        requestRender();
                    }

                    @Override
                    public void onDelta(String delta) {
                        synchronized (vt.answer) {
                            vt.answer.append(delta);
                        }
                        requestRender();
                    }
                });
            } catch (ChatException e) {
                vt.error = e.kind() == ChatException.Kind.CANCELLED ? "Stopped." : e.getMessage();
            } catch (RuntimeException e) {
                vt.error = "Chat failed: " + e;
            } finally {
                vt.done = true;
                current = null;
                ApplicationManager.getApplication().invokeLater(() -> setBusy(false), ModalityState.any());
                requestRender();
            }
        });
    }

    private void setBusy(boolean busy) {
        send.setEnabled(!busy);
        stop.setEnabled(busy);
    }

    private void requestRender() {
        if (renderQueued.compareAndSet(false, true)) {
            ApplicationManager.getApplication().invokeLater(() -> {
                renderQueued.set(false);
                render();
            }, ModalityState.any());
        }
    }

    private void render() {
        StringBuilder html = new StringBuilder("<html><body>");
        // 2+ workspace folders (protocol 3): sources read folder/path.
        IndexStatus status = service.status().status();
        boolean multiRoot = status != null && status.isMultiRoot();
        if (turns.isEmpty()) {
            html.append("<p style='color:gray'>Messages get the most relevant parts of this project (from ragls) "
                    + "in front, as a &lt;rag_context&gt; block. Chat endpoint and model: Settings | Tools | ragls.</p>");
        }
        for (int t = 0; t < turns.size(); t++) {
            ViewTurn vt = turns.get(t);
            html.append("<p><b>You</b>").append(vt.change ? " <span style='color:gray'>(plan a change)</span>" : "")
                    .append("<br>").append(text(vt.userText)).append("</p>");
            if (vt.note != null) {
                html.append("<p style='color:gray'><i>").append(text(vt.note)).append("</i></p>");
            }
            String answer;
            synchronized (vt.answer) {
                answer = vt.answer.toString();
            }
            html.append("<p><b>Assistant</b><br>").append(answer.isEmpty() && vt.error == null ? "\u2026" : text(answer)).append("</p>");
            if (vt.error != null) {
                html.append("<p style='color:red'>").append(text(vt.error)).append("</p>");
            }
            if (!vt.sources.isEmpty()) {
                html.append("<p style='color:gray'>Sources: ");
                for (int i = 0; i < vt.sources.size(); i++) {
                    Chunk c = vt.sources.get(i);
                    html.append(i == 0 ? "" : ", ").append("<a href='src:").append(t).append(':').append(i).append("'>")
                            .append(text(c.fileLine(multiRoot))).append("</a>");
                }
                html.append("</p>");
            }
            if (vt.done && vt.resultId != null && vt.error == null) {
                html.append("<p style='color:gray'>Rate this context: <a href='rate:").append(t).append(":up'>Helpful</a> \u00b7 ")
                        .append("<a href='rate:").append(t).append(":down'>Not helpful</a>")
                        .append(vt.rated == null ? "" : " \u2014 " + text(vt.rated)).append("</p>");
            }
            html.append("<hr>");
        }
        history.setText(html.append("</body></html>").toString());
        history.setCaretPosition(history.getDocument().getLength());
    }

    private static String text(String s) {
        String esc = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
        StringBuilder out = new StringBuilder();
        for (String line : esc.split("\n", -1)) {
            if (out.length() > 0) {
                out.append("<br>");
            }
            int lead = 0;
            while (lead < line.length() && line.charAt(lead) == ' ') {
                lead++;
            }
            out.append("&nbsp;".repeat(lead)).append(line.substring(lead));
        }
        return out.toString();
    }

    /** "rate:TURN:up|down": sends the rating on a pooled thread, then shows how it went. */
    private void rate(String description) {
        String[] parts = description.split(":");
        ViewTurn vt;
        try {
            vt = turns.get(Integer.parseInt(parts[1]));
        } catch (RuntimeException stale) {
            return;
        }
        FeedbackParams.Rating rating = "up".equals(parts[2]) ? FeedbackParams.Rating.UP : FeedbackParams.Rating.DOWN;
        String resultId = vt.resultId;
        vt.rated = "sending\u2026";
        render();
        ApplicationManager.getApplication().executeOnPooledThread(() -> {
            String line = RagChat.rate(service.rater(), resultId, rating, null);
            vt.rated = (rating == FeedbackParams.Rating.UP ? "Helpful: " : "Not helpful: ") + line;
            service.log("chat rating " + rating.wire() + ": " + line);
            requestRender();
        });
    }

    private void openSource(String description) {
        if (description == null || !description.startsWith("src:")) {
            return;
        }
        String[] parts = description.split(":");
        try {
            Chunk c = turns.get(Integer.parseInt(parts[1])).sources.get(Integer.parseInt(parts[2]));
            VirtualFile vf = VirtualFileManager.getInstance().findFileByUrl(c.uri());
            if (vf == null && c.folderUri() != null && !c.folderUri().isEmpty()) {
                vf = VirtualFileManager.getInstance().findFileByUrl(c.folderUri() + "/" + c.path());
            }
            if (vf == null && project.getBasePath() != null) {
                vf = LocalFileSystem.getInstance().findFileByPath(project.getBasePath() + "/" + c.path());
            }
            if (vf != null) {
                new OpenFileDescriptor(project, vf, c.startLine(), 0).navigate(true);
            }
        } catch (RuntimeException ignored) {
            // stale link after "New Chat"
        }
    }

    @Override
    public void dispose() {
        stopRequested.set(true);
        OpenAiChatClient c = current;
        if (c != null) {
            c.cancel();
        }
    }
}
